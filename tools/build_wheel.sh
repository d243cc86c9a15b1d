#!/usr/bin/env bash
# Builds dist/dynoc-<version>-cp311.cp312.cp313-…-manylinux_2_X_x86_64.whl: the
# CLI (MLIR/LLVM linked in: tools/portable_cli.sh), the capture extensions,
# libdynrt, oneDNN/Sleef/cuDNN-frontend for model builds and the `dynoc`
# package (tools/make_wheel.py); then `auditwheel repair` grafts the few
# libraries beyond the manylinux set into the wheel and tags it with the
# policy it meets. Prints the wheel's path.
#   tools/build_wheel.sh [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out="$root/dist"
[ "${1:-}" = --out ] && out="$2"
bazel build //lib/capture:extensions //lib/runtime/python:_dynrt.abi3.so \
  //lib/runtime:libdynrt.so //lib/runtime/gloo:libdynrt_gloo.so //tools/bench:dynrt-bench >&2
cli="$(tools/portable_cli.sh)"
plain="$(mktemp -d)"
trap 'rm -rf "$plain"' EXIT
wheel="$(.venv/bin/python tools/make_wheel.py --cli "$cli" --out "$plain")"
# --plat auto: the most compatible manylinux policy the binaries meet (the
# build machine's glibc and libstdc++ decide it).
PATH="$root/.venv/bin:$PATH" .venv/bin/auditwheel repair --plat auto -w "$plain/repaired" "$wheel" >&2
mkdir -p "$out"
repaired="$(ls "$plain"/repaired/*.whl)"
rm -f "$out"/dynoc-*.whl
mv "$repaired" "$out/"
echo "$out/$(basename "$repaired")"
