// SPDX-License-Identifier: LGPL-2.1-or-later
// node-hot.js [SECONDS]: a JavaScript workload with two known hot functions,
// hotThree doing three times the work of hotOne (the same loop, 3n and n
// turns), that runs for SECONDS and exits, so V8 writes out what it buffers in
// its perf map or jitdump file. The driving loop turns a few hundred times a
// second at most, too few for V8 to compile it and inline the two into it.
function hotThree(n) { let s = 0; for (let i = 0; i < 3 * n; i++) s += (i * i) % 7; return s; }
function hotOne(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * i) % 7; return s; }
const end = Date.now() + 1000 * Number(process.argv[2] || 4);
let sink = 0;
while (Date.now() < end) sink += hotThree(1000000) + hotOne(1000000);
if (sink === 42) console.log(sink);
