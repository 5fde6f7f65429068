// SPDX-License-Identifier: LGPL-2.1-or-later
// `go tool pprof` reads the pprof export: -raw gives the same stacks and
// counts as the folded export, -top the same total and per-function self counts.
import { join } from "node:path";
import { addCount, compareStacks, countsByPid, exportDir, fail, finish, foldedName, isMultiProcess, readFolded, run, tempDir, withoutProcess } from "./reader-common.mjs";

const kind = process.argv[2];
const dir = exportDir(kind);
const file = join(dir, "profile.pb.gz");
const env = { ...process.env, HOME: tempDir("pprof-home-") };
const allFolded = readFolded(dir);
// a multi-process profile's samples carry the process as labels, not as a frame
const folded = isMultiProcess(kind) ? withoutProcess(allFolded) : allFolded;

const raw = run("go", ["tool", "pprof", "-raw", "-symbolize=none", file], { env });
if (raw.status !== 0) {
	fail(`go tool pprof -raw failed: ${raw.stderr}`);
	finish(`pprof ${kind}`);
}

// Samples: "  COUNT  NANOS: loc loc ...", then label lines; Locations: "ID: 0xADDR [M=N] name file:line s=0"
// with continuation lines for inline frames (innermost first).
const samples = [], locations = new Map();
let section = "", period = 0, current = null;
for (const line of raw.stdout.split("\n")) {
	let m;
	if ((m = /^Period: (\d+)$/.exec(line))) period = Number(m[1]);
	if (/^(Samples|Locations|Mappings):?$/.test(line.trim())) { section = line.trim().replace(":", ""); continue; }
	if (section === "Samples" && (m = /^\s+(\d+)\s+(\d+): ([\d ]+)$/.exec(line)))
		samples.push({ count: Number(m[1]), nanos: Number(m[2]), locs: m[3].trim().split(/\s+/).map(Number), labels: {} });
	else if (section === "Samples" && samples.length && /^\s+\w+:\[/.test(line))
		for (const l of line.trim().matchAll(/(\w+):\[([^\]]*)\]/g)) samples[samples.length - 1].labels[l[1]] = l[2];
	if (section === "Locations") {
		if ((m = /^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*) (\S*):(\d+) s=\d+$/.exec(line))) {
			current = [m[2]];
			locations.set(Number(m[1]), current);
		} else if ((m = /^\s+(.*) (\S*):(\d+) s=\d+$/.exec(line)) && current) {
			current.push(m[1]);
		}
	}
}
if (period <= 0) fail("pprof reports no period");
const stacks = new Map();
for (const s of samples) {
	const names = [];
	for (const id of s.locs) {
		const lines = locations.get(id);
		if (!lines) fail(`sample names unknown location ${id}`);
		else names.push(...lines);
	}
	if (s.nanos !== s.count * period) fail(`cpu value ${s.nanos} is not ${s.count} x ${period}`);
	addCount(stacks, names.reverse().map(foldedName).join(";"), s.count);
}
compareStacks(`pprof -raw (${kind})`, folded, stacks);

// Multi-process: every sample has pid, tid and comm labels (and the unit), and the counts
// per pid label are the folding's per process frame.
if (isMultiProcess(kind)) {
	const byPid = new Map();
	for (const s of samples) {
		for (const key of ["pid", "tid", "comm", "unit"])
			if (!(key in s.labels) && !(key === "comm" && s.labels.pid === "300"))
				fail(`sample without a ${key} label: ${JSON.stringify(s.labels)}`);
		if (s.labels.unit !== undefined && s.labels.unit !== "demo.service") fail(`unit label ${s.labels.unit}`);
		addCount(byPid, Number(s.labels.pid), s.count);
	}
	compareStacks(`pprof samples per pid label (${kind})`, countsByPid(allFolded), byPid);
} else if (samples.some((s) => Object.keys(s.labels).length))
	fail("a single-process profile's samples carry labels");

// -top: the total and each function's self count equal the folding's leaf counts.
const top = run("go", ["tool", "pprof", "-top", "-nodecount=0", "-nodefraction=0", "-sample_index=samples",
	"-symbolize=none", file], { env });
if (top.status !== 0) fail(`go tool pprof -top failed: ${top.stderr}`);
const total = /Total samples = (\d+)/.exec(top.stdout);
const expectedTotal = [...folded.values()].reduce((a, b) => a + b, 0);
if (!total || Number(total[1]) !== expectedTotal)
	fail(`pprof -top total ${total && total[1]}, folded total ${expectedTotal}`);
const leafSelf = new Map(), topSelf = new Map();
for (const [stack, n] of folded) addCount(leafSelf, stack.split(";").pop(), n);
for (const line of top.stdout.split("\n")) {
	const m = /^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.*?)( \(inline\))?$/.exec(line);
	if (m && Number(m[1]) > 0) addCount(topSelf, foldedName(m[2]), Number(m[1]));
}
compareStacks(`pprof -top self counts (${kind})`, leafSelf, topSelf);
finish(`pprof ${kind}`);
