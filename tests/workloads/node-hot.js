// SPDX-License-Identifier: LGPL-2.1-or-later
// node-hot.js [SECONDS]: a JavaScript workload with known hot functions
// (sumSquares, compare called from Array.prototype.sort) that runs for SECONDS
// and exits, so V8 writes out what it buffers in its perf map or jitdump file.
function compare(x, y) { return x - y; }
function work(n) {
  const a = [];
  for (let i = 0; i < n; i++) a.push((i * 7919) % 100003);
  a.sort(compare);
  return a[5];
}
function sumSquares(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * i) % 7; return s; }
const end = Date.now() + 1000 * Number(process.argv[2] || 4);
let sink = 0;
while (Date.now() < end) sink += work(20000) + sumSquares(200000);
if (sink === 42) console.log(sink);
