# SPDX-License-Identifier: Apache-2.0
"""Builds the vkpipe package with setuptools, for `pip install ./python`
(offline, no build isolation: `pip install --no-build-isolation ./python`).

The extension compiles against vkpipe's public headers and links
libvkpipe.so, found (first match wins) through
  VKPIPE_PREFIX=/usr/local      an installed vkpipe (include/, lib/),
  pkg-config vkpipe             an installed vkpipe with its .pc file,
  this source tree              include/ and VKPIPE_BUILD_DIR (default build/).
The library's directory is recorded as the extension's run path. CMake builds
the same package without pip (docs/python.md)."""
import glob
import os
import re
import subprocess

import numpy
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(vkpipe VERSION ([0-9.]+)", f.read()).group(1)


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args, "vkpipe"], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.split()


def locate():
    prefix = os.environ.get("VKPIPE_PREFIX")
    if prefix:
        libdir = next((d for d in (os.path.join(prefix, "lib"),
                                   os.path.join(prefix, "lib", "x86_64-linux-gnu"))
                       if glob.glob(os.path.join(d, "libvkpipe.so*"))),
                      os.path.join(prefix, "lib"))
        return [os.path.join(prefix, "include")], [libdir]
    cflags, ldirs = pkg_config("--cflags-only-I"), pkg_config("--libs-only-L")
    if cflags is not None and ldirs is not None:
        return [f[2:] for f in cflags], [d[2:] for d in ldirs]
    build = os.environ.get("VKPIPE_BUILD_DIR", os.path.join(ROOT, "build"))
    if not glob.glob(os.path.join(build, "libvkpipe.so*")):
        raise SystemExit(f"vkpipe setup.py: no libvkpipe.so in '{build}'; build vkpipe "
                         "first (scripts/setup.sh) or set VKPIPE_PREFIX")
    return [os.path.join(ROOT, "include")], [os.path.abspath(build)]


includes, libdirs = locate()
ext = Extension(
    "vkpipe._vkpipe",
    sources=sorted(glob.glob(os.path.join("src", "*.c"))),
    include_dirs=includes + [numpy.get_include()],
    library_dirs=libdirs,
    runtime_library_dirs=libdirs,
    libraries=["vkpipe"],
    define_macros=[("VKPY_VERSION", f'"{version()}"')],
    extra_compile_args=["-std=c11", "-D_POSIX_C_SOURCE=200809L", "-D_DEFAULT_SOURCE"],
)

setup(
    name="vkpipe",
    version=version(),
    description="Load, partition, build, run and pipeline ML models with vkpipe",
    license="Apache-2.0",
    packages=["vkpipe"],
    ext_modules=[ext],
    python_requires=">=3.9",
    install_requires=["numpy"],
)
