"""Assembles dynoc's wheel from what `bazel build` made (tools/build_wheel.sh
runs the build first, then this, then auditwheel):

  dynoc/                   the Python package, with
    _bin/dynoc             the CLI, MLIR/LLVM linked in (--cli: the portable
                           build; the `dynoc` console script runs it)
    _bin/dynrt-bench       dynoc bench without MLIR (the `dynrt-bench` script)
    _data/AtenOps.td       the aten dialect's op list (capture checks ops against it)
    _lib/libdynrt.so       libdynrt, with _include/dynrt/ (C API headers)
    _lib/libdynrt_gloo.so  libdynrt's gloo communicator plugin
    _toolchain/            what a model build compiles against, carried so that
                           a user needs only a C++ compiler (CPU) or nvcc (CUDA):
      include/, lib/       oneDNN 2.x and Sleef 3.x, the versions the kernels are
                           written and tested against (a distribution's may be
                           another major version: Ubuntu 24.04 has oneDNN 3)
      cudnn-frontend/      the cuDNN frontend's headers (header-only)
  _dynoc_C*.so             the capture extension, one per CPython version built
                           (_dynoc_C.so: 3.11; _dynoc_C.cpython-312-*.so, ...):
                           the wheel's tags
  _dynrt.abi3.so           dynoc.load's extension (stable ABI)

The shared libraries these need beyond what manylinux guarantees (libfmt and
libtinfo for the CLI, gloo's, oneDNN's OpenCL loader and OpenMP) are grafted
into dynoc.libs/ by `auditwheel repair`, which also sets the manylinux tag.
"""
import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
BIN = os.path.join(ROOT, "bazel-bin")

# What a model build needs at the user's site and the wheel does not carry
# (METADATA's Requires-External; `dynoc doctor` checks each).
EXTERNAL = ["g++ (a C++17 compiler with OpenMP; or set CXX)",
            "nvcc (CUDA 13, only for --target=cuda)"]
# oneDNN's and Sleef's files on the build machine (Debian's libdnnl-dev and
# libsleef-dev) and the cuDNN frontend tools/bootstrap.sh fetched.
SYSTEM_INCLUDE = "/usr/include"
SYSTEM_LIB = "/usr/lib/x86_64-linux-gnu"
CUDNN_FRONTEND = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                              "dynoc", "nvidia-cudnn-frontend-1.16.0")
# The licenses of what _toolchain/ carries.
CARRIED_LICENSES = {"oneDNN": "/usr/share/doc/libdnnl2/copyright",
                    "Sleef": "/usr/share/doc/libsleef3/copyright"}


def version():
    text = open(os.path.join(ROOT, "python/dynoc/_version.py")).read()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def toolchain_files():
    """(path in the wheel, path on disk, executable?) of dynoc/_toolchain/."""
    include = "dynoc/_toolchain/include"
    for name in sorted(os.listdir(SYSTEM_INCLUDE)):
        if name.startswith("dnnl") and name.endswith((".h", ".hpp")):
            yield f"{include}/{name}", os.path.join(SYSTEM_INCLUDE, name), False
    oneapi = os.path.join(SYSTEM_INCLUDE, "oneapi", "dnnl")
    for name in sorted(os.listdir(oneapi)):
        yield f"{include}/oneapi/dnnl/{name}", os.path.join(oneapi, name), False
    yield f"{include}/sleef.h", os.path.join(SYSTEM_INCLUDE, "x86_64-linux-gnu", "sleef.h"), False
    for soname in ("libdnnl.so.2", "libsleef.so.3"):
        yield (f"dynoc/_toolchain/lib/{soname}",
               os.path.realpath(os.path.join(SYSTEM_LIB, soname)), True)
    for what, path in CARRIED_LICENSES.items():
        yield f"dynoc/_toolchain/licenses/{what}", path, False
    front = os.path.join(CUDNN_FRONTEND, "include")
    for folder, dirs, names in sorted(os.walk(front)):
        dirs.sort()
        for name in sorted(names):
            rel = os.path.relpath(os.path.join(folder, name), front)
            yield (f"dynoc/_toolchain/cudnn-frontend/include/{rel}",
                   os.path.join(folder, name), False)


def files(cli):
    """(path in the wheel, path on disk, executable?); `cli` is the dynoc
    binary to carry."""
    pkg = os.path.join(ROOT, "python", "dynoc")
    for folder, dirs, names in sorted(os.walk(pkg)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, pkg)
        for name in sorted(names):
            if name.endswith(".py"):
                inside = name if rel == "." else f"{rel}/{name}"
                yield f"dynoc/{inside}", os.path.join(folder, name), False
    yield "dynoc/_bin/dynoc", cli, True
    yield "dynoc/_bin/dynrt-bench", os.path.join(BIN, "tools/bench/dynrt-bench"), True
    yield "dynoc/_data/AtenOps.td", os.path.join(ROOT, "lib/ir/include/dynoc/IR/AtenOps.td"), False
    yield "dynoc/_lib/libdynrt.so", os.path.join(BIN, "lib/runtime/libdynrt.so"), True
    yield "dynoc/_lib/libdynrt_gloo.so", \
        os.path.join(BIN, "lib/runtime/gloo/libdynrt_gloo.so"), True
    for h in ("dynrt.h", "dynrt.hpp"):
        yield f"dynoc/_include/dynrt/{h}", os.path.join(ROOT, "lib/runtime/include/dynrt", h), False
    for name, _ in capture_extensions():
        yield name, os.path.join(BIN, "lib/capture", name), True
    yield "_dynrt.abi3.so", os.path.join(BIN, "lib/runtime/python/_dynrt.abi3.so"), True
    yield from toolchain_files()


def capture_extensions():
    """(file name, "cp3XX") of each capture extension the build made."""
    found = [("_dynoc_C.so", "cp311")]
    for name in sorted(os.listdir(os.path.join(BIN, "lib/capture"))):
        m = re.match(r"_dynoc_C\.cpython-(3\d+)-x86_64-linux-gnu\.so$", name)
        if m:
            found.append((name, f"cp{m.group(1)}"))
    return found


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=os.path.join(ROOT, "dist"))
    p.add_argument("--cli", default=os.path.join(BIN, "tools/dynoc/dynoc"),
                   help="the dynoc binary to carry (tools/build_wheel.sh passes the "
                        "portable build, MLIR/LLVM linked in)")
    a = p.parse_args()
    v = version()
    pythons = [t for _, t in capture_extensions()]
    tag = ".".join(pythons)  # a compressed tag set (PEP 425): one per version
    name = f"dynoc-{v}-{tag}-{tag}-linux_x86_64.whl"
    newest = int(pythons[-1][3:])  # "cp313" -> 13
    info = f"dynoc-{v}.dist-info"
    metadata = "\n".join([
        "Metadata-Version: 2.1", "Name: dynoc", f"Version: {v}",
        "Summary: Ahead-of-time graph capture and compilation for PyTorch programs",
        "License: MIT", f"Requires-Python: >=3.11,<3.{newest + 1}",
        "Requires-Dist: torch>=2.11,<2.16", "Requires-Dist: numpy", "Requires-Dist: safetensors",
        *[f"Requires-External: {e}" for e in EXTERNAL], "",
        "dynoc capture / build / explain and `import dynoc` (dynoc.compile, dynoc.load).",
        "Run `dynoc doctor` to see what a model build still needs on this machine.", ""])
    wheel = "\n".join(["Wheel-Version: 1.0", "Generator: dynoc tools/make_wheel.py",
                       "Root-Is-Purelib: false",
                       *[f"Tag: {t}-{t}-linux_x86_64" for t in pythons], ""])
    entry = "[console_scripts]\ndynoc = dynoc._cli:main\ndynrt-bench = dynoc._cli:bench\n"
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, name)
    records = []
    with zipfile.ZipFile(path + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
        def add(arc, data, executable=False):
            zi = zipfile.ZipInfo(arc, date_time=(2026, 1, 1, 0, 0, 0))
            zi.external_attr = (0o100755 if executable else 0o100644) << 16  # S_IFREG: pip keeps +x
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            records.append(record_line(arc, data))
        for arc, src, executable in files(a.cli):
            if not os.path.exists(src):
                sys.exit(f"make_wheel: {src} is missing (bazel build //... and "
                         "tools/bootstrap.sh first)")
            add(arc, open(src, "rb").read(), executable)
        add(f"{info}/METADATA", metadata.encode())
        add(f"{info}/WHEEL", wheel.encode())
        add(f"{info}/entry_points.txt", entry.encode())
        add(f"{info}/LICENSE", open(os.path.join(ROOT, "LICENSE"), "rb").read())
        records.append(f"{info}/RECORD,,")
        z.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    os.replace(path + ".tmp", path)
    print(path)


if __name__ == "__main__":
    main()
