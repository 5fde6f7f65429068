#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""mutate-elf.py IN OUT SEED SECTION...: copy the ELF file IN to OUT with the
contents of the named sections (.eh_frame, .debug_info, ...) damaged by a
seeded generator: bits flipped, runs of bytes replaced by random ones or by
0xff, lengths made huge. Sections the program does not execute, so the copy
still runs: a hostile input for whoever parses its CFI and DWARF."""
import random
import shutil
import struct
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    for h in headers:
        name_off = strtab[4] + h[0]
        name = data[name_off:data.index(b"\0", name_off)].decode()
        yield name, h[4], h[5]  # offset, size


def main():
    src, dst, seed, wanted = sys.argv[1], sys.argv[2], int(sys.argv[3]), set(sys.argv[4:])
    shutil.copyfile(src, dst)
    data = bytearray(open(dst, "rb").read())
    rng = random.Random(seed)
    found = 0
    for name, off, size in list(sections(bytes(data))):
        if name not in wanted or size == 0:
            continue
        found += 1
        for _ in range(max(1, size // 16)):
            at = off + rng.randrange(size)
            how = rng.randrange(4)
            if how == 0:
                data[at] ^= 1 << rng.randrange(8)
            elif how == 1:
                n = min(rng.randrange(1, 16), off + size - at)
                data[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
            elif how == 2:
                n = min(4, off + size - at)
                data[at:at + n] = b"\xff" * n
            else:
                data[at] = 0
    if not found:
        sys.exit("none of the sections %s in %s" % (sorted(wanted), src))
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main()
