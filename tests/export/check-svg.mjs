// SPDX-License-Identifier: LGPL-2.1-or-later
// The SVG flame graph is well-formed XML (xmllint), its root frames carry the
// folding's counts, and headless Chromium draws it: the screenshot has many
// colours and mostly frames, and clicking a frame (through the embedded
// script) zooms, which changes the picture.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { addCount, compareStacks, exportDir, fail, finish, foldedName, readFolded, run, tempDir } from "./reader-common.mjs";

const kind = process.argv[2];
const dir = exportDir(kind);
const file = join(dir, "profile.svg");
const svg = readFileSync(file, "utf8");

const lint = run("xmllint", ["--noout", file]);
if (lint.status !== 0) fail(`xmllint: ${lint.stderr.slice(0, 2000)}`);
if (/(href|src)="(https?:)?\/\//.test(svg)) fail("the SVG refers to something on the network");

// Descriptions read "name\n[module\n]N samples, P%", in a <title> or (narrow frames) a data-t
// attribute; frames at the lowest level above "all" are the roots.
const decode = (s) => s.replace(/&#10;/g, "\n").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
	.replace(/&apos;/g, "'").replace(/&amp;/g, "&");
const frames = [...svg.matchAll(/<g class="f"(?: data-t="([^"]*)")?>(?:<title>([^<]*)<\/title>)?<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"/g)]
	.map((m) => ({ title: decode(m[1] ?? m[2]), y: Number(m[4]) }));
const nFrames = (svg.match(/<g class="f"/g) || []).length;
if (frames.length !== nFrames) fail(`${nFrames - frames.length} frames are not "<g class="f"> + description + <rect>"`);
const samplesOf = (f) => Number(/\n(\d+) samples, [\d.]+%$/.exec(f.title)[1]);
const folded = readFolded(dir);
const total = [...folded.values()].reduce((a, b) => a + b, 0);
if (frames.length < 2) fail(`only ${frames.length} frames drawn`);
else {
	if (samplesOf(frames[0]) !== total) fail(`"all" frame says ${samplesOf(frames[0])} samples, folded total ${total}`);
	const rootY = Math.max(...frames.slice(1).map((f) => f.y));
	const roots = new Map(), expected = new Map();
	for (const f of frames.slice(1)) if (f.y === rootY) addCount(roots, foldedName(f.title.split("\n")[0]), samplesOf(f));
	// frames narrower than 0.1 px are left out: expect only roots wide enough to be drawn
	for (const [stack, n] of folded) addCount(expected, stack.split(";")[0], n);
	for (const [k, n] of expected) if (n / total * 1180 < 0.1) expected.delete(k);
	const drawn = [...expected.values()].reduce((a, b) => a + b, 0);
	if (drawn === total) compareStacks(`svg root frames (${kind})`, expected, roots);
}

// Decode an 8-bit RGB(A) PNG and count its distinct colours and non-background pixels.
function pngStats(buf) {
	const width = buf.readUInt32BE(16), height = buf.readUInt32BE(20), depth = buf[24], type = buf[25];
	if (depth !== 8 || (type !== 2 && type !== 6)) throw new Error(`unexpected PNG type ${type}/${depth}`);
	const bpp = type === 6 ? 4 : 3, stride = width * bpp, idat = [];
	for (let at = 8; at < buf.length;) {
		const len = buf.readUInt32BE(at), name = buf.toString("latin1", at + 4, at + 8);
		if (name === "IDAT") idat.push(buf.subarray(at + 8, at + 8 + len));
		at += 12 + len;
	}
	const raw = inflateSync(Buffer.concat(idat)), img = Buffer.alloc(stride * height);
	for (let y = 0; y < height; y++) {
		const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
		for (let x = 0; x < stride; x++) {
			const a = x >= bpp ? img[y * stride + x - bpp] : 0, b = y ? img[(y - 1) * stride + x] : 0;
			const c = x >= bpp && y ? img[(y - 1) * stride + x - bpp] : 0;
			const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
			const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
			img[y * stride + x] = (line[x] + pred) & 0xff;
		}
	}
	const colours = new Set();
	let background = 0, highlighted = 0;
	for (let i = 0; i < img.length; i += bpp) {
		const rgb = (img[i] << 16) | (img[i + 1] << 8) | img[i + 2];
		colours.add(rgb);
		if (rgb === 0xf8f8f0 || rgb === 0xffffff) background++;
		if (rgb === 0xe040e0) highlighted++; // the search highlight
	}
	return { colours: colours.size, drawn: 1 - background / (width * height), highlighted, img };
}

function screenshot(svgFile, png) {
	const height = Number(/height="(\d+)"/.exec(svg)[1]);
	const r = run("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		`--user-data-dir=${tempDir("chromium-")}`, `--screenshot=${png}`,
		`--window-size=1200,${Math.min(height, 4000)}`, `file://${svgFile}`], { timeout: 60000 });
	if (r.status !== 0) throw new Error(`chromium failed (${r.status}): ${r.stderr.slice(-1000)}`);
	return pngStats(readFileSync(png));
}

// Chromium takes seconds per picture: the synthetic names are XML's problem, not drawing's.
if (kind === "hostile") finish(`svg ${kind}`);
try {
	const plain = screenshot(file, join(dir, "flame.png"));
	console.log(`screenshot: ${plain.colours} colours, ${(plain.drawn * 100).toFixed(0)}% drawn (${join(dir, "flame.png")})`);
	if (plain.colours < 8) fail(`screenshot has only ${plain.colours} colours`);
	if (plain.drawn < 0.1) fail(`screenshot is ${(plain.drawn * 100).toFixed(1)}% frames, looks blank`);
	// once the page's own script has set up, click the third frame and search for its
	// name (once: Chromium is slow)
	if (kind !== "random") finish(`svg ${kind}`);
	const zoomFile = join(dir, "zoomed.svg");
	const clicked = frames[2].title.split("\n")[0].replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	const script = '<script>window.addEventListener("load", function () {' +
		'document.querySelectorAll("g.f")[2].dispatchEvent(new MouseEvent("click"));' +
		`FG.search(${JSON.stringify("^" + clicked + "$")}); });</script>\n</svg>`;
	writeFileSync(zoomFile, svg.replace("</svg>", () => script));
	const zoomed = screenshot(zoomFile, join(dir, "zoomed.png"));
	if (zoomed.img.equals(plain.img)) fail("clicking a frame did not change the picture (zoom script not running?)");
	if (zoomed.colours < 4) fail(`zoomed screenshot has only ${zoomed.colours} colours`);
	if (!zoomed.highlighted) fail("searching for a drawn frame's name highlighted nothing");
} catch (e) {
	fail(e.message);
}
finish(`svg ${kind}`);
