#!/usr/bin/env bash
# The main job on the embedded example: capture examples/mlp.py, build the graph
# into a .so, run it from C++ through libdynrt, compare with PyTorch eager.
# One line per step with its time; everything the steps print goes to the log
# named first (out/demo.log), whose tail is shown if a step fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="$root/out/mlp"
log="$root/out/demo.log"
mkdir -p "$root/out"
: > "$log"
echo "[demo] full output of every step: $log"

# step WHAT COMMAND...: runs COMMAND with its output to the log.
step() {
  local what="$1" t0=$SECONDS
  shift
  printf '[demo] %-46s' "$what"
  echo "=== $what: $*" >> "$log"
  if "$@" >> "$log" 2>&1; then
    printf ' %5ds\n' $((SECONDS - t0))
  else
    printf ' FAILED after %ds; the end of %s:\n' $((SECONDS - t0)) "$log"
    tail -n 25 "$log"
    exit 1
  fi
}

step "install what dynoc needs (tools/bootstrap.sh)" tools/bootstrap.sh
# The Python extensions too: the README's `dynoc.load` example needs _dynrt.
step "build dynoc (bazel)" bazel build //tools/dynoc //examples/run_model \
  //lib/runtime/python:_dynrt.abi3.so //lib/capture:_dynoc_C.so
rm -rf "$out"
step "capture examples/mlp.py -> out/mlp" \
  bazel-bin/tools/dynoc/dynoc capture examples/mlp.py -o "$out" -- --save-io "$out/io"
step "build the model -> out/mlp/mlp.so" \
  bazel-bin/tools/dynoc/dynoc build "$out/graph_0.mlir" -o "$out/mlp.so"
step "run it from C++ (libdynrt) and compare" \
  bazel-bin/examples/run_model/run_model "$out/mlp.so" "$out/io/x.npy" "$out/io/expected.npy"
# run_model's verdict: `max relative difference vs PyTorch eager: ... -> MATCH`.
grep "max relative difference vs PyTorch eager" "$log" | tail -n 1
