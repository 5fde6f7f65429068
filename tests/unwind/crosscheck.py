#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""crosscheck.py [--check] NAME EXECUTABLE PROFD.json PERF.script

Compares one program's profile by profd (its Firefox Profiler export: user
frames only, each sample with its time) with `perf script -F
comm,tid,time,ip,sym,dso` output of `perf record -k CLOCK_REALTIME
--call-graph dwarf` taken on the same process at the same time. Only the
samples of the seconds both profilers covered count (their windows start and
end a few hundred milliseconds apart). Prints one Markdown table row:

  | program | samples profd / perf | named leaf profd / perf | reach root profd / perf | leaf TVD (noise) |

With --check, exits 1 (saying why) unless profd's named-leaf and root-reaching
shares are at least perf's minus 1 point (less the noise their counts carry:
2.33 standard errors of the difference, 1% one-sided) and the total variation
distance of the two leaf distributions is at most 0.1, after normalising names
(no "(inlined)", "+0x..", C++ parameter lists, compiler clone suffixes,
__GI_/__libc_ alias prefixes, @plt; glibc's __memcpy_*unaligned* as the
__memmove_* they alias; Go's ABI wrappers and pointer-receiver wrappers as the
function they wrap). "noise" is the 99th percentile of the TVD between two
random splits of the pooled samples into the same sizes: what sampling alone
makes two profiles of one distribution differ by (it should stay well below
0.1, or a failure may be noise; a failure says so).

A stack reaches a root when its outermost frame is _start, clone, clone3,
start_thread or a Go goroutine's root, or, in an executable without symbols,
lies in the code at its ELF entry point (_start, unnamed). perf's unwinder
may add one bogus frame (address -1 or 0, "[unknown]") past the root; it is
not counted as a frame.
"""
import json
import math
import random
import re
import struct
import sys
from collections import Counter

Z_ONE_SIDED_1PCT = 2.33
TVD_MAX = 0.1

ROOTS = ("_start", "clone", "clone3", "__clone", "__clone3", "start_thread")
GO_ROOTS = ("runtime.goexit", "runtime.rt0_go", "runtime.mstart")
# glibc's x86-64 _start is 0x26 bytes; its frame's address is the return address of its call
START_CODE_BYTES = 0x40
UNNAMED = re.compile(r"^(?P<module>.*)\+0x(?P<address>[0-9a-f]+)$")
CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$")
GO_ABI_SUFFIX = re.compile(r"\.abi(0|internal)$")
GO_POINTER_WRAPPER = re.compile(r"^(?P<pkg>[\w./-]*)\.\(\*(?P<type>\w+)\)\.(?P<method>\w+)$")
# profd's Firefox locations: "function (in module)" or "function (in module) (file:line)"
FIREFOX_LOCATION = re.compile(r"^(?P<name>.*?) \(in (?P<module>[^()]*)\)(?: \([^()]*:\d+\))?$")


def strip_params(name):
    """'ns::f(int, std::vector<int>) const' -> 'ns::f' (balanced, from the end)."""
    name = re.sub(r"\s+const$", "", name)
    if not name.endswith(")"):
        return name
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        if name[i] == ")":
            depth += 1
        elif name[i] == "(":
            depth -= 1
            if depth == 0:
                # "(anonymous namespace)" and operator() are part of names
                return name[:i] if i > 0 else name
    return name


def normalise(name, module=None):
    name = name.strip()
    if name.endswith(" (inlined)"):
        name = name[: -len(" (inlined)")]
    m = UNNAMED.match(name)
    if m or name == "[unknown]":
        base = (m.group("module") if m else (module or "?")).rsplit("/", 1)[-1]
        return "[unnamed " + base + "]"
    # Go: "pkg.(*T).M", the wrapper the compiler makes for a value method, is "pkg.T.M"
    # inlined into it (profd names the inlined method, perf at some addresses the wrapper)
    m = GO_POINTER_WRAPPER.match(name)
    if m:
        return f"{m.group('pkg')}.{m.group('type')}.{m.group('method')}"
    name = GO_ABI_SUFFIX.sub("", name)
    name = strip_params(name)
    name = CLONE_SUFFIX.sub("", name)
    name = re.sub(r"^((__GI_)|(__libc_))+", "", name)
    name = re.sub(r"@plt$", "", name)
    # glibc's unaligned memcpy variants are aliases of the memmove ones: one address, two names
    name = re.sub(r"^__memcpy_(\w*unaligned(_erms)?)$", r"__memmove_\1", name)
    return name


def is_named(name):
    return not UNNAMED.match(name) and name != "[unknown]"


class Executable:
    """The target's executable: its basename, ELF entry point and loads (offset -> address)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            data = f.read(1 << 16)
        assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "a 64-bit LE ELF file"
        self.base = path.rsplit("/", 1)[-1]
        self.entry, phoff = struct.unpack_from("<QQ", data, 24)
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
        self.loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from(
                "<IIQQQQ", data, phoff + i * phentsize)
            if p_type == 1:  # PT_LOAD
                self.loads.append((p_offset, p_vaddr, p_filesz))

    def address_of_offset(self, offset):
        for p_offset, p_vaddr, size in self.loads:
            if p_offset <= offset < p_offset + size:
                return offset - p_offset + p_vaddr
        return None

    def is_start(self, address):
        return address is not None and self.entry <= address < self.entry + START_CODE_BYTES


def is_root(frame, exe):
    """frame: (name, module basename, ELF address or None)."""
    name, module, address = frame
    n = normalise(name)
    if n in ROOTS or any(n.startswith(r) for r in GO_ROOTS):
        return True
    return not is_named(name) and module == exe.base and exe.is_start(address)


def read_profd(path):
    """Samples of profd's Firefox export: (unix seconds, leaf frame, root frame)."""
    with open(path) as f:
        doc = json.load(f)
    start = doc["meta"]["startTime"] / 1000.0
    samples = []
    for thread in doc["threads"]:
        strings = thread["stringTable"]
        frames = thread["frameTable"]["data"]
        stacks = thread["stackTable"]["data"]

        def frame(stack):
            location = strings[frames[stacks[stack][1]][0]]
            m = FIREFOX_LOCATION.match(location)
            name, module = (m.group("name"), m.group("module")) if m else (location, None)
            u = UNNAMED.match(name)
            return name, module, int(u.group("address"), 16) if u else None

        for stack, time_ms, _ in thread["samples"]["data"]:
            if stack is None:
                continue
            root = stack
            while stacks[root][0] is not None:
                root = stacks[root][0]
            samples.append((start + time_ms / 1000.0, frame(stack), frame(root)))
    return samples


def read_perf_script(path, exe):
    """Samples of `perf script -F comm,tid,time,ip,sym,dso`, user frames only."""
    samples = []
    time = None
    frames = []

    def flush():
        user = [f for f in frames if not f[1].startswith("[kernel")]
        # the bogus frame perf's unwinder may add past the outermost one
        while len(user) > 1 and user[-1][0] in ("ffffffffffffffff", "0"):
            user.pop()
        if user and time is not None:
            samples.append((time, perf_frame(user[0], exe), perf_frame(user[-1], exe)))

    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                flush()
                frames = []
                time = None
                continue
            if not line.startswith(("\t", " ")):
                m = re.search(r"\s(\d+\.\d+):\s*$", line)
                time = float(m.group(1)) if m else None
                continue
            m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                frames.append((m.group(1), m.group(3), m.group(2)))
    flush()
    return samples


def perf_frame(frame, exe):
    """(ip, dso, symbol) -> (name, module basename, ELF address): perf prints file offsets."""
    ip, dso, symbol = frame
    module = dso.rsplit("/", 1)[-1]
    address = exe.address_of_offset(int(ip, 16)) if module == exe.base else None
    return symbol, module, address


def common_window(a, b):
    """The samples of each inside the seconds both cover."""
    if not a or not b:
        return a, b
    lo = max(min(s[0] for s in a), min(s[0] for s in b))
    hi = min(max(s[0] for s in a), max(s[0] for s in b))
    return [s for s in a if lo <= s[0] <= hi], [s for s in b if lo <= s[0] <= hi]


def summarise(samples, exe):
    total = len(samples)
    named = sum(1 for _, leaf, _ in samples if is_named(leaf[0]))
    rooted = sum(1 for _, _, root in samples if is_root(root, exe))
    leaves = Counter(normalise(leaf[0], leaf[1]) for _, leaf, _ in samples)
    return total, named / total if total else 0, rooted / total if total else 0, leaves


def tvd(a, b):
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return 1.0
    return 0.5 * sum(abs(a[k] / ta - b[k] / tb) for k in set(a) | set(b))


def tvd_noise(a, b, rounds=200, quantile=0.99):
    """The TVD two samples of a's and b's sizes from one distribution (the pooled one) reach."""
    pooled = list(a.elements()) + list(b.elements())
    na = sum(a.values())
    rng = random.Random(12)
    seen = []
    for _ in range(rounds):
        rng.shuffle(pooled)
        seen.append(tvd(Counter(pooled[:na]), Counter(pooled[na:])))
    seen.sort()
    return seen[min(len(seen) - 1, int(quantile * len(seen)))]


def share_noise(p1, n1, p2, n2):
    """Z standard errors of the difference of two shares."""
    if not n1 or not n2:
        return 0.0
    return Z_ONE_SIDED_1PCT * math.sqrt(p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2)


def main():
    args = [a for a in sys.argv[1:] if a != "--check"]
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    name, exe_path, profd_path, script_path = args
    exe = Executable(exe_path)
    ours, perf = common_window(read_profd(profd_path), read_perf_script(script_path, exe))
    n_ours, named_ours, root_ours, leaves_ours = summarise(ours, exe)
    n_perf, named_perf, root_perf, leaves_perf = summarise(perf, exe)
    d = tvd(leaves_ours, leaves_perf)
    noise = tvd_noise(leaves_ours, leaves_perf)
    named_bound = named_perf - 0.01 - share_noise(named_ours, n_ours, named_perf, n_perf)
    root_bound = root_perf - 0.01 - share_noise(root_ours, n_ours, root_perf, n_perf)
    print(f"| {name} | {n_ours} / {n_perf} | {100 * named_ours:.1f}% / {100 * named_perf:.1f}% "
          f"| {100 * root_ours:.1f}% / {100 * root_perf:.1f}% | {d:.3f} ({noise:.3f}) |")
    if "--check" not in sys.argv:
        return 0
    problems = []
    if n_ours < 50 or n_perf < 50:
        problems.append(f"too few samples ({n_ours} profd, {n_perf} perf in the common window)")
    if named_ours < named_bound:
        problems.append(f"named leaves {100 * named_ours:.1f}% < perf's {100 * named_perf:.1f}% - 1 "
                        f"- noise ({100 * named_bound:.1f}%)")
    if root_ours < root_bound:
        problems.append(f"stacks reaching a root {100 * root_ours:.1f}% < perf's "
                        f"{100 * root_perf:.1f}% - 1 - noise ({100 * root_bound:.1f}%)")
    if d > TVD_MAX:
        problems.append(f"leaf distributions differ: TVD {d:.3f} > {TVD_MAX} (sampling alone "
                        f"reaches {noise:.3f} at these counts)")
    if problems:
        print(f"FAIL {name}: " + "; ".join(problems), file=sys.stderr)
        print_differences(leaves_ours, leaves_perf, sys.stderr)
        return 1
    return 0


def print_differences(ours, perf, out, n=12):
    """The leaves whose shares differ most, profd's share then perf's."""
    to, tp = sum(ours.values()) or 1, sum(perf.values()) or 1
    keys = sorted(set(ours) | set(perf), key=lambda k: -abs(ours[k] / to - perf[k] / tp))
    for k in keys[:n]:
        print(f"  {k:60s} {100 * ours[k] / to:6.2f}% {100 * perf[k] / tp:6.2f}%", file=out)


if __name__ == "__main__":
    sys.exit(main())
