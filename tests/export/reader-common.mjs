// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared by the reader checks: write a synthetic profile's exports, read the
// folded file as the reference, compare stack counts and report what differed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

let failures = 0;
const tempDirs = [];

// A temporary directory, removed when the check passes and kept for a look when it fails.
export function tempDir(prefix) {
	const dir = mkdtempSync(join(tmpdir(), prefix));
	tempDirs.push(dir);
	return dir;
}

export function fail(message) {
	console.error("FAIL: " + message);
	failures++;
}

export function finish(what) {
	if (failures) {
		console.error(`${what}: ${failures} check(s) failed; files kept in ${tempDirs.join(" ")}`);
		process.exit(1);
	}
	for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
	console.log(`${what}: ok`);
	process.exit(0);
}

export function requireModules() {
	const dir = process.env.NODE_MODULES;
	if (!dir || !existsSync(dir)) {
		console.error(`node_modules not found at '${dir}': run 'npm ci' in tests/`);
		process.exit(1);
	}
	return dir;
}

export function run(cmd, args, options = {}) {
	const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 1 << 30, ...options });
	if (r.error) throw new Error(`cannot run ${cmd}: ${r.error.message}`);
	return r;
}

// Exports of one synthetic profile (mixed, hostile, random), or of a real sampling session of
// workload-split when kind is "session".
export function exportDir(kind) {
	const dir = tempDir(`export-${kind}-`);
	const r = kind === "session"
		? run(process.env.EXPORT_SESSION, [process.env.WORKLOAD_SPLIT, dir])
		: run(process.env.EXPORT_SAMPLE, [kind, dir]);
	if (r.status !== 0) {
		console.error(`exporting the ${kind} profile failed: ${r.stderr}`);
		process.exit(1);
	}
	return dir;
}

// How the folded format spells a name.
export function foldedName(name) {
	return name.replace(/;/g, ":").replace(/[\n\r]/g, " ");
}

export function readFolded(dir) {
	const stacks = new Map();
	for (const line of readFileSync(join(dir, "profile.folded"), "utf8").split("\n")) {
		if (!line) continue;
		const m = /^(.*) (\d+)$/.exec(line);
		if (!m || m[1].includes("  ")) {
			fail(`folded line not 'stack COUNT': ${JSON.stringify(line)}`);
			continue;
		}
		if (stacks.has(m[1])) fail(`folded stack listed twice: ${m[1]}`);
		stacks.set(m[1], Number(m[2]));
	}
	return stacks;
}

export function addCount(map, key, n) {
	map.set(key, (map.get(key) || 0) + n);
}

export function compareStacks(what, expected, actual) {
	let shown = 0;
	const keys = new Set([...expected.keys(), ...actual.keys()]);
	for (const k of keys) {
		const e = expected.get(k) || 0, a = actual.get(k) || 0;
		if (e !== a) {
			if (shown++ < 10) fail(`${what}: stack ${JSON.stringify(k)}: folded says ${e}, reader says ${a}`);
			else failures++;
		}
	}
	const sum = (m) => [...m.values()].reduce((x, y) => x + y, 0);
	if (sum(expected) !== sum(actual))
		fail(`${what}: total ${sum(actual)} samples, folded has ${sum(expected)}`);
	if (expected.size === 0) fail(`${what}: the folding is empty`);
}
