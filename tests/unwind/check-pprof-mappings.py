#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-pprof-mappings.py EXECUTABLE < `go tool pprof -raw -symbolize=none PROFILE`

Checks that a pprof profile's mappings are true to the process, so that
pprof's own symbolizer (and Pyroscope, Parca) could name every location
again from the files alone:
- mapping 1 is EXECUTABLE; no file has two mappings; file mappings have
  real (non-zero) runtime ranges;
- every location of a file mapping lies inside it, and its file offset
  (address - start + offset), turned into an ELF address through the file's
  program headers, is named by binutils' addr2line as the location's
  outermost function (inline frames expanded, names demangled).
Exits 1 with the reasons otherwise.
"""
import os
import re
import subprocess
import sys


def phdrs(path):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    loads = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
    return loads


def elf_address(loads, offset):
    for off, vaddr, size in loads:
        if off <= offset < off + size:
            return vaddr + offset - off
    return None


SYMBOLS = {}


def symbol_covers(path, name, address):
    """Is 'name' a symbol of 'path' covering 'address'? (aliases such as sanitizer interceptors)"""
    if path not in SYMBOLS:
        table = {}
        for args in (["nm", "-S", "-C", "--defined-only"], ["nm", "-D", "-S", "-C", "--defined-only"]):
            out = subprocess.run(args + [path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                f = line.split(maxsplit=3)
                if len(f) == 4:
                    table.setdefault(normalise(f[3]), []).append((int(f[0], 16), int(f[1], 16)))
        SYMBOLS[path] = table
    return any(a <= address < a + max(size, 1) for a, size in SYMBOLS[path].get(normalise(name), []))


def normalise(name):
    """Compare names as perf users do: no parameters, clone suffixes or glibc alias prefixes."""
    name = re.sub(r"\(.*\)( const)?$", "", name.strip())
    name = re.sub(r"(\.(constprop|isra|part|cold)(\.\d+)?)+$", "", name)
    return re.sub(r"^((__GI_)|(__libc_))+", "", name)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    exe = os.path.realpath(sys.argv[1])
    section, mappings, locations, problems = None, {}, [], []
    current = None
    for line in sys.stdin:
        line = line.rstrip("\n")
        if line in ("Locations", "Mappings"):
            section = line
            continue
        if section == "Mappings":
            m = re.match(r"\s*(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+)\s+(\S+)?", line)
            if m:
                mappings[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16),
                                              int(m.group(4), 16), m.group(5) or "")
        elif section == "Locations":
            m = re.match(r"\s*(\d+): 0x([0-9a-f]+) M=(\d+) (.*?)( \S*:\d+)? s=\d+$", line)
            if m:
                current = [int(m.group(2), 16), int(m.group(3)), [m.group(4)]]
                locations.append(current)
                continue
            m = re.match(r"\s+(.*?)( \S*:\d+)? s=\d+$", line)
            if m and current:
                current[2].append(m.group(1))

    files = [f for _, _, _, f in mappings.values() if f.startswith("/")]
    if not mappings or os.path.realpath(mappings[min(mappings)][3]) != exe:
        problems.append(f"mapping 1 is {mappings.get(1, (0, 0, 0, '(none)'))[3]}, not {exe}")
    for f in set(files):
        if files.count(f) > 1:
            problems.append(f"{f} has {files.count(f)} mappings")
    for mid, (start, limit, offset, f) in mappings.items():
        if f.startswith("/") and (start == 0 or limit <= start):
            problems.append(f"mapping {mid} ({f}) has no runtime range: {start:#x}-{limit:#x}")

    checked = 0
    for address, mid, names in locations:
        start, limit, offset, f = mappings.get(mid, (0, 0, 0, ""))
        if not f.startswith("/") or not os.path.exists(f):
            continue
        if not start <= address < limit:
            problems.append(f"{address:#x} ({names[-1]}) outside mapping {mid} {start:#x}-{limit:#x}")
            continue
        if "+0x" in names[-1]:
            continue  # unnamed: nothing to compare with
        elf = elf_address(phdrs(f), address - start + offset)
        if elf is None:
            problems.append(f"{address:#x} ({names[-1]}): file offset outside {f}'s segments")
            continue
        out = subprocess.run(["addr2line", "-f", "-i", "-C", "-e", f, hex(elf)],
                             capture_output=True, text=True).stdout.split("\n")
        outer = [l for l in out[0::2] if l][-1:] or ["??"]
        if outer[0] == "??":
            continue  # no symbols addr2line can read (stripped): not a contradiction
        if normalise(outer[0]) != normalise(names[-1]) and not symbol_covers(f, names[-1], elf):
            problems.append(f"{address:#x} in {f}: pprof says {names[-1]}, the file says {outer[0]}")
        checked += 1
    if checked == 0:
        problems.append("no location could be checked against its file")
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    print(f"{len(mappings)} mappings, {checked} locations named the same by addr2line")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
