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
bazel test //...
echo "[test] lit: IR, passes and build diagnostics" >&2
.venv/bin/lit -sv test/ir
echo "[test] end to end" >&2
.venv/bin/python -m pytest -q test/e2e
echo "[test] all tests passed" >&2
