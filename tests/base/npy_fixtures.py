#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Fixture for tests/base/test_npy.c: checks the .npy files vkpipe wrote and
writes NumPy's own versions of them.

    npy_fixtures.py DIR

For every DIR/c_<name>.npy (written by vkpipe) it loads the array with NumPy
and writes DIR/np_<name>_v1.npy, _v2.npy and _v3.npy with
numpy.lib.format.write_array. It also writes the files vkpipe must refuse:
big-endian, Fortran order, complex, text, structured.
"""
import glob
import os
import sys

import numpy as np
from numpy.lib import format as npf


def write(path, arr, version):
    with open(path, "wb") as f:
        npf.write_array(f, arr, version=version, allow_pickle=False)


def main():
    d = sys.argv[1]
    for path in sorted(glob.glob(os.path.join(d, "c_*.npy"))):
        arr = np.load(path)
        stem = os.path.basename(path)[2:-4]
        for v in (1, 2, 3):
            write(os.path.join(d, "np_%s_v%d.npy" % (stem, v)), arr, (v, 0))
        # What vkpipe wrote, as NumPy sees it, for the C side to compare.
        with open(os.path.join(d, "seen_%s.txt" % stem), "w") as f:
            f.write("%s %s %s\n" % (arr.dtype.str, arr.shape,
                                    arr.flags["C_CONTIGUOUS"]))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(os.path.join(d, "bad_bigendian.npy"), x.astype(">f4"))
    np.save(os.path.join(d, "bad_fortran.npy"), np.asfortranarray(x))
    np.save(os.path.join(d, "bad_complex.npy"), x.astype(np.complex64))
    np.save(os.path.join(d, "bad_text.npy"), np.array(["a", "bc"]))
    np.save(os.path.join(d, "bad_structured.npy"),
            np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]))


if __name__ == "__main__":
    main()
