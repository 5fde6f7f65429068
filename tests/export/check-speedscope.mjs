// SPDX-License-Identifier: LGPL-2.1-or-later
// The speedscope export validates against the schema shipped in npm speedscope
// (with ajv), has as many weights as samples, and its stacks, merged over
// threads, are the folding's stacks with weights proportional to the counts.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addCount, compareStacks, exportDir, fail, finish, foldedName, isMultiProcess, readFolded, requireModules, withoutProcess } from "./reader-common.mjs";

const modules = requireModules();
const require = createRequire(join(modules, "noop.js"));
const Ajv = require("ajv");
const kind = process.argv[2];
const dir = exportDir(kind);
const schema = JSON.parse(readFileSync(join(modules, "speedscope/dist/release/file-format-schema.json"), "utf8"));
const doc = JSON.parse(readFileSync(join(dir, "profile.speedscope.json"), "utf8"));

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
if (!validate(doc)) fail(`schema: ${ajv.errorsText(validate.errors, { separator: "; " }).slice(0, 2000)}`);
if (doc.$schema !== "https://www.speedscope.app/file-format-schema.json") fail(`$schema is ${doc.$schema}`);

const frames = doc.shared.frames, weighted = new Map();
for (const p of doc.profiles) {
	if (p.type !== "sampled") fail(`profile ${p.name} is ${p.type}, not sampled`);
	if (p.samples.length !== p.weights.length)
		fail(`profile ${p.name}: ${p.samples.length} samples but ${p.weights.length} weights`);
	let total = 0;
	p.samples.forEach((stack, i) => {
		for (const f of stack) if (!(f >= 0 && f < frames.length)) fail(`profile ${p.name}: frame ${f} out of range`);
		addCount(weighted, stack.map((f) => foldedName(frames[f].name)).join(";"), p.weights[i]);
		total += p.weights[i];
	});
	if (p.endValue - p.startValue !== total) fail(`profile ${p.name}: endValue ${p.endValue} but weights add up to ${total}`);
}

// Weights are counts times one period: divide it out, then the stacks must be the folding's
// (without its process frames: a multi-process profile names each thread's process instead).
const allFolded = readFolded(dir);
const folded = isMultiProcess(kind) ? withoutProcess(allFolded) : allFolded;
if (isMultiProcess(kind)) {
	const processes = new Set([...allFolded.keys()].map((k) => k.split(";")[0]));
	for (const p of doc.profiles) {
		const m = / in (.*)$/.exec(p.name);
		if (!m || !processes.has(m[1])) fail(`profile ${JSON.stringify(p.name)} does not name a process of the folding`);
	}
	if (doc.name !== "profd unit:demo.service") fail(`profile set named ${doc.name}`);
}
const count = [...folded.values()].reduce((a, b) => a + b, 0);
const weight = [...weighted.values()].reduce((a, b) => a + b, 0);
const period = count ? weight / count : 0;
if (!Number.isInteger(period) || period <= 0) fail(`weights (${weight}) are not a whole multiple of the ${count} samples`);
const counts = new Map();
for (const [k, w] of weighted) {
	if (w % period) fail(`stack ${JSON.stringify(k)}: weight ${w} is not a multiple of ${period}`);
	counts.set(k, w / period);
}
compareStacks(`speedscope (${kind})`, folded, counts);
finish(`speedscope ${kind}`);
