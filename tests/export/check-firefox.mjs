// SPDX-License-Identifier: LGPL-2.1-or-later
// The Firefox export: its tables' indices are sound (the profiler's importer is
// lax about them), its stacks merged over threads are the folding's, and the
// profiler's own import code (profiler-cli) loads it, lists every thread and
// builds call trees that match the file's per-thread folding.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addCount, compareStacks, countsByPid, exportDir, fail, finish, foldedName, isMultiProcess, profilerSession, readFolded, withoutProcess } from "./reader-common.mjs";

const kind = process.argv[2];
const dir = exportDir(kind);
const file = join(dir, "profile.json");
const doc = JSON.parse(readFileSync(file, "utf8"));

// The function name of a location "name (in module) (file:line)" or "name (in module)".
function functionName(location) {
	const m = /^(.*) \(in [^)]*\)(?: \(.*:.*\))?$/s.exec(location);
	return m ? m[1] : location;
}

function column(table, name) {
	if (!(name in table.schema)) fail(`table lacks column ${name}`);
	return table.schema[name];
}

if (doc.meta.version > 36) fail(`meta.version ${doc.meta.version} is newer than the importer accepts`);
const nCategories = doc.meta.categories.length;
const perThread = [], merged = new Map();
for (const t of doc.threads) {
	const where = `thread ${t.name} (${t.tid})`;
	const st = t.stackTable, ft = t.frameTable, sm = t.samples;
	const prefix = column(st, "prefix"), frame = column(st, "frame");
	const location = column(ft, "location"), category = column(ft, "category"), line = column(ft, "line");
	const stack = column(sm, "stack"), time = column(sm, "time");
	st.data.forEach((row, i) => {
		if (row[prefix] !== null && !(row[prefix] >= 0 && row[prefix] < i)) fail(`${where}: stack ${i} has prefix ${row[prefix]}, not an earlier stack`);
		if (!(row[frame] >= 0 && row[frame] < ft.data.length)) fail(`${where}: stack ${i} names frame ${row[frame]} of ${ft.data.length}`);
	});
	ft.data.forEach((row, i) => {
		if (!(row[location] >= 0 && row[location] < t.stringTable.length)) fail(`${where}: frame ${i} location ${row[location]} out of the string table`);
		if (!(row[category] >= 0 && row[category] < nCategories)) fail(`${where}: frame ${i} category ${row[category]}`);
		if (row[line] !== null && !(row[line] > 0)) fail(`${where}: frame ${i} line ${row[line]}`);
	});
	const stacks = new Map();
	let last = -Infinity;
	for (const row of sm.data) {
		if (row[time] < last) fail(`${where}: sample times go backwards`);
		last = row[time];
		if (!(row[stack] >= 0 && row[stack] < st.data.length)) { fail(`${where}: sample stack ${row[stack]}`); continue; }
		const names = [];
		for (let s = row[stack]; s !== null; s = st.data[s][prefix])
			names.push(foldedName(functionName(t.stringTable[ft.data[st.data[s][frame]][location]])));
		const key = names.reverse().join(";");
		addCount(stacks, key, 1);
		addCount(merged, key, 1);
	}
	perThread.push(stacks);
}
const folded = readFolded(dir);
compareStacks(`firefox file (${kind})`, isMultiProcess(kind) ? withoutProcess(folded) : folded, merged);

// Multi-process: threads carry their own process's pid and name, and the samples per pid are
// the folding's per process frame. Without sample times every sample sits at 0, and the
// product line says there is no timeline.
if (isMultiProcess(kind)) {
	const byPid = new Map(), names = new Map();
	doc.threads.forEach((t) => {
		addCount(byPid, t.pid, t.samples.data.length);
		if (names.has(t.pid) && names.get(t.pid) !== t.processName) fail(`pid ${t.pid} has two process names`);
		names.set(t.pid, t.processName);
		if (t.samples.data.some((row) => row[t.samples.schema.time] !== 0)) fail(`thread ${t.tid} has sample times`);
	});
	compareStacks(`firefox samples per pid (${kind})`, countsByPid(folded), byPid);
	if (names.get(100) !== "app" || names.get(200) !== "db") fail(`process names ${JSON.stringify([...names])}`);
	if (!/no timeline/.test(doc.meta.product)) fail(`meta.product ${doc.meta.product} does not say there is no timeline`);
}

// The profiler's importer.
const { pq, stop } = await profilerSession(file, "export-check");
try {
	const list = pq ? pq("thread", "list", "--json") : null;
	if (!list || list.status !== 0) {
		if (list) fail(`profiler-cli thread list failed: ${list.stderr}`);
	} else {
		const threads = JSON.parse(list.stdout).threads;
		if (threads.length !== doc.threads.length) fail(`profiler lists ${threads.length} threads, the file has ${doc.threads.length}`);
		// the first thread, and the one with the most distinct stacks
		const busiest = perThread.reduce((b, m, i) => (m.size > perThread[b].size ? i : b), 0);
		for (const i of new Set([0, busiest].filter((i) => i < threads.length))) {
			const th = threads.find((x) => x.tid === doc.threads[i].tid);
			if (!th) { fail(`profiler lost thread ${doc.threads[i].tid}`); continue; }
			const r = pq("thread", "samples-top-down", "--thread", th.threadHandle, "--json", "--max-lines", "1000000");
			if (r.status !== 0) { fail(`samples-top-down ${th.threadHandle}: ${r.stderr}`); continue; }
			const tree = JSON.parse(r.stdout).regularCallTree, stacks = new Map();
			(function walk(node, path) {
				if (node.selfSamples > 0) addCount(stacks, path.join(";"), node.selfSamples);
				for (const c of node.children || []) walk(c, [...path, foldedName(c.name)]);
			})(tree, []);
			compareStacks(`profiler call tree of tid ${th.tid} (${kind})`, perThread[i], stacks);
		}
	}
} finally {
	stop();
}
finish(`firefox ${kind}`);
