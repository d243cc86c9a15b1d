#!/usr/bin/env bash
# Runs every test: Catch2 unit tests (bazel test), lit + FileCheck IR tests, and the
# end-to-end Python tests. Sets up a bare machine first (tools/bootstrap.sh).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools/bootstrap.sh
echo "[test] generated dialect is up to date" >&2
.venv/bin/python lib/ir/tools/gen_aten_ops.py --check
echo "[test] bazel build + unit tests" >&2
bazel build //...
# The runtime's tests under AddressSanitizer and ThreadSanitizer; they use the
# dynoc binary just built (see .bazelrc), then the normal build is restored.
for san in asan tsan; do
  echo "[test] runtime tests under --config=$san" >&2
  # The models come from a binary Bazel does not track: never reuse results.
  bazel test --config=$san --nocache_test_results \
    --test_env=DYNOC_BIN="$root/bazel-bin/tools/dynoc/dynoc" \
    //test/unit:runtime_test //test/unit:model_run_test //test/unit:threads_test
done
bazel build //...
bazel test //...
echo "[test] lit: IR, passes and build diagnostics" >&2
.venv/bin/lit -sv test/ir
echo "[test] end to end, and the capture corpus (each program against PyTorch's Dynamo)" >&2
.venv/bin/python -m pytest -q -n 2 test/e2e test/capture
echo "[test] all tests passed" >&2
