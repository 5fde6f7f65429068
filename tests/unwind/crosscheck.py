#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""crosscheck.py NAME PROFD.folded PERF.script [--check]

Compares one program's profile by profd (folded stacks, user frames only)
with `perf script` output of `perf record --call-graph dwarf` taken on the same
process over the same seconds. Prints one Markdown table row:

  | program | samples profd / perf | named leaf profd / perf | reach root profd / perf | leaf TVD |

With --check, exits 1 (saying why) unless profd's named-leaf share and
root-reaching share are at least perf's minus 1 point and the total
variation distance of the two leaf distributions is at most 0.1, after
normalising names (no "(inlined)", "+0x..", C++ parameter lists, compiler
clone suffixes, __GI_/__libc_ alias prefixes; glibc's __memcpy_*unaligned*
as the __memmove_* they alias).

Both are samples of a few thousand, so each criterion allows for the noise
the counts carry: the shares may fall short by up to 2.33 standard errors of
their difference more (1% one-sided), and the TVD may exceed 0.1 by the
99th percentile of the TVD between two random splits of the pooled samples
into the same sizes (what two samplings of one distribution differ by; the
"bound" column shows 0.1 plus that).
"""
import math
import random
import re
import sys
from collections import Counter

Z_ONE_SIDED_1PCT = 2.33

ROOTS = ("_start", "clone", "clone3", "__clone", "__clone3", "start_thread")
GO_ROOTS = ("runtime.goexit", "runtime.rt0_go", "runtime.mstart")
UNNAMED = re.compile(r"^(?P<module>.*)\+0x[0-9a-f]+$")
CLONE_SUFFIX = re.compile(r"(\.(constprop|isra|part|cold|lto_priv)(\.\d+)?)+$")


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
    name = strip_params(name)
    name = CLONE_SUFFIX.sub("", name)
    name = re.sub(r"^((__GI_)|(__libc_))+", "", name)
    name = re.sub(r"@plt$", "", name)
    # glibc's unaligned memcpy variants are aliases of the memmove ones: one address, two names
    name = re.sub(r"^__memcpy_(\w*unaligned(_erms)?)$", r"__memmove_\1", name)
    return name


def is_named(name):
    return not UNNAMED.match(name) and name != "[unknown]" and not name.startswith("[unnamed")


def is_root(name):
    n = normalise(name)
    return n in ROOTS or any(n.startswith(r) for r in GO_ROOTS)


def read_folded(path):
    """(leaf, root) -> count; folded lines are root-first, names joined by ';'."""
    stacks = Counter()
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            frames, _, count = line.rpartition(" ")
            names = frames.split(";")
            stacks[(names[-1], names[0], None)] += int(count)
    return stacks


def read_perf_script(path):
    """Samples of `perf script -F comm,tid,ip,sym,dso`: user frames only, leaf first."""
    stacks = Counter()
    frames = []

    def flush():
        user = [(s, d) for s, d in frames if d != "[kernel.kallsyms]" and not d.startswith("[kernel")]
        if user:
            stacks[(user[0][0], user[-1][0], user[0][1])] += 1

    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                flush()
                frames = []
                continue
            if not line.startswith(("\t", " ")):
                continue  # the sample's header line
            m = re.match(r"\s*[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$", line)
            if m:
                frames.append((m.group(1), m.group(2)))
    flush()
    return stacks


def summarise(stacks):
    total = sum(stacks.values())
    named = sum(c for (leaf, _, _), c in stacks.items() if is_named(leaf))
    rooted = sum(c for (_, root, _), c in stacks.items() if is_root(root))
    leaves = Counter()
    for (leaf, _, module), c in stacks.items():
        leaves[normalise(leaf, module)] += c
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
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    name, folded, script = args
    n_ours, named_ours, root_ours, leaves_ours = summarise(read_folded(folded))
    n_perf, named_perf, root_perf, leaves_perf = summarise(read_perf_script(script))
    d = tvd(leaves_ours, leaves_perf)
    d_bound = 0.1 + tvd_noise(leaves_ours, leaves_perf)
    named_bound = named_perf - 0.01 - share_noise(named_ours, n_ours, named_perf, n_perf)
    root_bound = root_perf - 0.01 - share_noise(root_ours, n_ours, root_perf, n_perf)
    print(f"| {name} | {n_ours} / {n_perf} | {100 * named_ours:.1f}% / {100 * named_perf:.1f}% "
          f"| {100 * root_ours:.1f}% / {100 * root_perf:.1f}% | {d:.3f} ({d_bound:.3f}) |")
    if "--check" not in sys.argv:
        return 0
    problems = []
    if n_ours < 50 or n_perf < 50:
        problems.append(f"too few samples ({n_ours} profd, {n_perf} perf)")
    if named_ours < named_bound:
        problems.append(f"named leaves {100 * named_ours:.1f}% < perf's {100 * named_perf:.1f}% - 1 "
                        f"- noise ({100 * named_bound:.1f}%)")
    if root_ours < root_bound:
        problems.append(f"stacks reaching a root {100 * root_ours:.1f}% < perf's "
                        f"{100 * root_perf:.1f}% - 1 - noise ({100 * root_bound:.1f}%)")
    if d > d_bound:
        problems.append(f"leaf distributions differ: TVD {d:.3f} > {d_bound:.3f}")
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
