#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The exported ABI is the headers: compares the functions libvkpipe.so
exports (nm -D --defined-only) with the functions the public headers declare,
as the C compiler itself lists them (gcc -aux-info on a file that includes
every header), in both directions.

usage: check_abi.py INCLUDE_DIR LIBVKPIPE_SO [CC]
"""
import glob
import os
import re
import subprocess
import sys
import tempfile


def declared(include_dir, cc):
    headers = sorted(glob.glob(os.path.join(include_dir, "vkpipe", "*.h")))
    if not headers:
        sys.exit(f"no headers under {include_dir}/vkpipe")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "all_headers.c")
        aux = os.path.join(tmp, "aux.txt")
        with open(src, "w") as f:
            for h in headers:
                f.write(f'#include "vkpipe/{os.path.basename(h)}"\n')
        subprocess.run([cc, "-std=c11", "-fsyntax-only", "-aux-info", aux,
                        "-I", include_dir, src], check=True)
        with open(aux) as f:
            lines = f.read().splitlines()
    names = set()
    prefix = os.path.realpath(os.path.join(include_dir, "vkpipe"))
    for line in lines:
        # /* FILE:LINE:NC */ extern TYPE NAME (PARAMS);
        m = re.match(r"/\* (\S+):\d+:\w+ \*/ (.*)$", line)
        if not m or not os.path.realpath(m.group(1)).startswith(prefix + os.sep):
            continue
        decl = m.group(2)
        if "static" in decl.split("(")[0].split():
            continue  # inline helpers are not exported
        name = re.search(r"(\w+) \(", decl)
        if name:
            names.add(name.group(1))
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] not in ("A",):  # A: version nodes
            names.add(parts[2].split("@")[0])
    return names


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cc = sys.argv[3] if len(sys.argv) > 3 else "cc"
    want = declared(sys.argv[1], cc)
    have = exported(sys.argv[2])
    extra = sorted(have - want)
    missing = sorted(want - have)
    print(f"{len(want)} functions declared in {sys.argv[1]}/vkpipe, "
          f"{len(have)} symbols exported by {sys.argv[2]}")
    if extra:
        print(f"exported but declared in no public header ({len(extra)}):")
        for n in extra:
            print("  " + n)
    if missing:
        print(f"declared but not exported ({len(missing)}):")
        for n in missing:
            print("  " + n)
    return 1 if extra or missing else 0


if __name__ == "__main__":
    sys.exit(main())
