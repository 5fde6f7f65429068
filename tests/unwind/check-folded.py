#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-folded.py FILE CHECK ARGS...: one check of a folded profile ("a;b;c COUNT" lines,
root first); prints what it measured, exits 1 when the check fails.

  split A B LOW HIGH [EXCLUDE]  of the samples whose stack has frame A or B (and not EXCLUDE),
                                the share with A lies in [LOW, HIGH]; at least 50 samples
  reach BUSY ROOT MIN [N]       of the samples whose stack has frame BUSY (at least N, default
                                50), a share of at least MIN also has frame ROOT
  caller FRAME CALLER MIN       of the samples whose stack has FRAME (at least 30), a share of at
                                least MIN has CALLER right rootward of it
  leaf FRAME MIN                at least 50 samples, a share of at least MIN with FRAME as the leaf
  absent SUBSTRING              no frame name contains SUBSTRING
"""
import sys


def read(path):
    stacks = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            stacks.append((stack.split(";"), int(count)))
    return stacks


def count(stacks, pred):
    return sum(n for frames, n in stacks if pred(frames))


def show(stacks, pred, k=5):
    for frames, n in sorted(stacks, key=lambda s: -s[1]):
        if pred(frames) and k > 0:
            print("  %d %s" % (n, ";".join(frames)), file=sys.stderr)
            k -= 1


def main():
    path, check, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    stacks = read(path)
    total = count(stacks, lambda f: True)
    ok = False
    if check == "split":
        a, b, low, high = args[0], args[1], float(args[2]), float(args[3])
        exclude = args[4] if len(args) > 4 else None
        kept = [(f, n) for f, n in stacks if exclude not in f]
        n_a = count(kept, lambda f: a in f)
        n_b = count(kept, lambda f: b in f and a not in f)
        share = n_a / (n_a + n_b) if n_a + n_b else 0
        print("%s %d, %s %d of %d samples: %.1f%% %s" % (a, n_a, b, n_b, total, share * 100, a))
        ok = n_a + n_b >= 50 and low <= share <= high
    elif check == "reach":
        busy, root, least = args[0], args[1], float(args[2])
        n_min = int(args[3]) if len(args) > 3 else 50
        n_busy = count(stacks, lambda f: busy in f)
        n_reach = count(stacks, lambda f: busy in f and root in f)
        print("%d of %d samples in %s reach %s (%d samples in all)" %
              (n_reach, n_busy, busy, root, total))
        ok = n_busy >= n_min and n_reach >= least * n_busy
        if not ok:
            show(stacks, lambda f: busy in f and root not in f)
    elif check == "caller":
        frame, caller, least = args[0], args[1], float(args[2])

        def called_from(f):
            return any(f[i] == frame and i > 0 and f[i - 1] == caller for i in range(len(f)))

        n_frame = count(stacks, lambda f: frame in f)
        n_called = count(stacks, called_from)
        print("%d of %d samples in %s have %s as its caller" % (n_called, n_frame, frame, caller))
        ok = n_frame >= 30 and n_called >= least * n_frame
        if not ok:
            show(stacks, lambda f: frame in f and not called_from(f))
    elif check == "leaf":
        frame, least = args[0], float(args[1])
        n_leaf = count(stacks, lambda f: f[-1] == frame)
        print("%d of %d samples with %s as the leaf" % (n_leaf, total, frame))
        ok = total >= 50 and n_leaf >= least * total
    elif check == "absent":
        bad = [(f, n) for f, n in stacks if any(args[0] in x for x in f)]
        print("%d samples with a frame containing %s" % (count(bad, lambda f: True), args[0]))
        ok = not bad
        show(bad, lambda f: True)
    else:
        sys.exit("check-folded.py: unknown check " + check)
    if not ok:
        print("check %s %s failed; the heaviest stacks:" % (check, " ".join(args)), file=sys.stderr)
        show(stacks, lambda f: True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
