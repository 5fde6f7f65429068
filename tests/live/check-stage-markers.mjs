// SPDX-License-Identifier: LGPL-2.1-or-later
// check-stage-markers.mjs PROFILE.json STAGE...: the Firefox export of a live run opens in
// the Firefox Profiler's importer (profiler-cli), and every thread that ran stage spans lists
// them as interval markers, each stage named, as many as the file has.
import { readFileSync } from "node:fs";
import { fail, finish, profilerSession } from "../export/reader-common.mjs";

const [file, ...stages] = process.argv.slice(2);
const doc = JSON.parse(readFileSync(file, "utf8"));
const want = new Map(); // tid -> Map(stage -> count)
for (const t of doc.threads) {
	const m = t.markers, counts = new Map();
	for (const row of m.data) {
		const name = t.stringTable[row[m.schema.name]];
		counts.set(name, (counts.get(name) || 0) + 1);
	}
	if (counts.size) want.set(t.tid, counts);
}
if (want.size < 2) fail(`${want.size} threads have stage markers in the file, the scanner runs 2`);

const { pq, stop } = await profilerSession(file, "stage-markers");
try {
	const list = pq ? pq("thread", "list", "--json") : null;
	if (list && list.status !== 0) fail(`profiler-cli thread list failed: ${list.stderr}`);
	const threads = list && list.status === 0 ? JSON.parse(list.stdout).threads : [];
	for (const [tid, counts] of want) {
		const th = threads.find((x) => x.tid === tid);
		if (!th) { fail(`the profiler lists no thread ${tid}`); continue; }
		const r = pq("thread", "markers", "--thread", th.threadHandle, "--json", "--limit", "0");
		if (r.status !== 0) { fail(`thread markers ${th.threadHandle}: ${r.stderr}`); continue; }
		const listed = new Map(JSON.parse(r.stdout).byType.map((b) => [b.markerName, b]));
		for (const stage of stages) {
			const b = listed.get(stage);
			if (!b) { fail(`thread ${tid}: no ${stage} markers listed`); continue; }
			if (!b.isInterval) fail(`thread ${tid}: ${stage} markers are not intervals`);
			if (b.count !== counts.get(stage)) fail(`thread ${tid}: ${b.count} ${stage} markers listed, the file has ${counts.get(stage)}`);
		}
		console.log(`thread ${tid}: ${[...listed.values()].map((b) => `${b.markerName} x${b.count}`).join(", ")}`);
	}
} finally {
	stop();
}
finish("stage markers");
