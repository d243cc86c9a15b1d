"""Assembles dynoc's wheel from what `bazel build` made (tools/build_wheel.sh
runs the build first, then this):

  dynoc/                   the Python package, with
    _bin/dynoc             the CLI (the `dynoc` console script runs it)
    _bin/dynrt-bench       dynoc bench without MLIR (the `dynrt-bench` script)
    _data/AtenOps.td       the aten dialect's op list (capture checks ops against it)
    _lib/libdynrt.so       libdynrt, with _include/dynrt/ (C API headers)
    _lib/libdynrt_gloo.so  libdynrt's gloo communicator plugin (needs libgloo0)
  _dynoc_C*.so             the capture extension, one per CPython version built
                           (_dynoc_C.so: 3.11; _dynoc_C.cpython-312-*.so, ...):
                           the wheel's tags
  _dynrt.abi3.so           dynoc.load's extension (stable ABI)

What a model build needs at the user's site and the wheel does not carry (a C++
compiler, oneDNN, Sleef, LLVM/MLIR 16's shared libraries) is named in METADATA
(Requires-External) and checked by `dynoc doctor`.
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

# Debian package names, for METADATA and `dynoc doctor`'s hints.
EXTERNAL = ["libmlir-16 (LLVM/MLIR 16 shared libraries the dynoc CLI links)",
            "libfmt9", "g++ (a C++17 compiler; or set CXX)", "libdnnl-dev (oneDNN)",
            "libsleef-dev (Sleef)", "libomp or libgomp (OpenMP)",
            "libgloo0 (gloo; only for dynoc.GlooCommunicator)"]


def version():
    text = open(os.path.join(ROOT, "python/dynoc/_version.py")).read()
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


def files():
    """(path in the wheel, path on disk, executable?)"""
    pkg = os.path.join(ROOT, "python", "dynoc")
    for folder, dirs, names in sorted(os.walk(pkg)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        rel = os.path.relpath(folder, pkg)
        for name in sorted(names):
            if name.endswith(".py"):
                inside = name if rel == "." else f"{rel}/{name}"
                yield f"dynoc/{inside}", os.path.join(folder, name), False
    yield "dynoc/_bin/dynoc", os.path.join(BIN, "tools/dynoc/dynoc"), True
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
        "Requires-Dist: torch>=2.13", "Requires-Dist: numpy", "Requires-Dist: safetensors",
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
        for arc, src, executable in files():
            if not os.path.exists(src):
                sys.exit(f"make_wheel: {src} is missing (bazel build //... first)")
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
