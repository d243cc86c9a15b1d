#!/usr/bin/env bash
# The main job on the embedded example: capture examples/mlp.py, build the graph
# into a .so, run it from C++ through libdynrt, compare with PyTorch eager.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools/bootstrap.sh
echo "[demo] building dynoc (bazel)" >&2
# The Python extensions too: the README's `dynoc.load` example needs _dynrt.
bazel build //tools/dynoc //examples/run_model //lib/runtime/python:_dynrt.abi3.so //lib/capture:_dynoc_C.so
out="$root/out/mlp"
rm -rf "$out"
echo "[demo] dynoc capture examples/mlp.py -o $out" >&2
bazel-bin/tools/dynoc/dynoc capture examples/mlp.py -o "$out" -- --save-io "$out/io"
echo "[demo] dynoc build $out/graph_0.mlir -o $out/mlp.so" >&2
bazel-bin/tools/dynoc/dynoc build "$out/graph_0.mlir" -o "$out/mlp.so"
echo "[demo] run_model (C++, libdynrt)" >&2
bazel-bin/examples/run_model/run_model "$out/mlp.so" "$out/io/x.npy" "$out/io/expected.npy"
