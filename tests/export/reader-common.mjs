// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared by the reader checks: write a synthetic profile's exports, read the
// folded file as the reference, compare stack counts and report what differed.
import { spawn, spawnSync } from "node:child_process";
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

// Exports of one synthetic profile (mixed, hostile, random, processes), or of a real sampling session of
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

// A multi-process profile (kind "processes") starts every folded stack with its process,
// "comm-pid"; the readers that keep processes elsewhere (pprof labels, Firefox processes,
// speedscope profile names) are compared with the folding without that frame.
export function isMultiProcess(kind) {
	return kind === "processes";
}

export function withoutProcess(stacks) {
	const out = new Map();
	for (const [stack, n] of stacks) addCount(out, stack.split(";").slice(1).join(";"), n);
	return out;
}

// Samples per pid of a multi-process folding, from the "comm-pid" frames.
export function countsByPid(stacks) {
	const out = new Map();
	for (const [stack, n] of stacks) {
		const m = /-(\d+)$/.exec(stack.split(";")[0]);
		if (!m) fail(`folded stack does not start with a process frame: ${JSON.stringify(stack)}`);
		else addCount(out, Number(m[1]), n);
	}
	return out;
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

// The Firefox Profiler's importer (profiler-cli) with 'file' loaded: { pq(...args), stop() }.
// `profiler-cli load` gives its daemon 500 ms to start, too little on a busy machine, so the
// daemon runs in the foreground (the command the tool itself suggests then) and is waited for;
// pq is null when the file did not load (the reason is reported through fail()).
export async function profilerSession(file, session) {
	const cli = join(requireModules(), "@firefox-devtools/profiler-cli/dist/profiler-cli.js");
	const env = { ...process.env, PROFILER_CLI_SESSION_DIR: tempDir("profiler-cli-") };
	const call = (...args) => run("node", [cli, ...args, "--session", session], { env, timeout: 30000 });
	const daemon = spawn("node", [cli, "--daemon", file, "--session", session], { env, stdio: "ignore" });
	let exited = null;
	daemon.on("exit", (code, signal) => { exited = signal || code; });
	const stop = () => {
		call("stop");
		if (exited === null) daemon.kill();
	};
	// Wait for its log to say the profile loaded: a client that cannot reach a daemon busy
	// loading deletes the session's files as stale, leaving the daemon unreachable.
	const log = join(env.PROFILER_CLI_SESSION_DIR, `${session}.log`);
	let loaded = false, refused = false;
	for (const start = Date.now(); Date.now() - start < 60000 && exited === null && !loaded && !refused;) {
		await new Promise((resolve) => setTimeout(resolve, 100));
		const text = existsSync(log) ? readFileSync(log, "utf8") : "";
		loaded = text.includes("Profile loaded successfully");
		refused = text.includes("Failed to load profile");
	}
	if (!loaded) {
		fail(`the profiler did not load the file: ${existsSync(log) ? readFileSync(log, "utf8").slice(-1500) : "no daemon log"}`);
		stop();
		return { pq: null, stop: () => {} };
	}
	return { pq: call, stop };
}
