#!/usr/bin/env bash
# Builds dist/dynoc-<version>-cp311.cp312.cp313-…-linux_x86_64.whl: the CLI, the
# capture extension, libdynrt and the `dynoc` package (tools/make_wheel.py).
#   tools/build_wheel.sh [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bazel build //tools/dynoc //lib/capture:extensions //lib/runtime/python:_dynrt.abi3.so \
  //lib/runtime:libdynrt.so //lib/runtime/gloo:libdynrt_gloo.so //tools/bench:dynrt-bench >&2
exec .venv/bin/python tools/make_wheel.py "$@"
