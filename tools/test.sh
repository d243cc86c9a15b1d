#!/usr/bin/env bash
# Runs every test: Catch2 unit tests (bazel test), lit + FileCheck IR tests, the
# end-to-end Python tests and the capture corpus, and the real-program suite's
# fast subset. Sets up a bare machine first (tools/bootstrap.sh).
#
#   tools/test.sh               what CI runs
#   tools/test.sh --realworld   only the whole real-program suite (67 transformers
#                               models, ~40 minutes); writes docs/capture-models.md
#   tools/test.sh --jit-corpus  only the whole capture corpus in process (every
#                               program with DYNOC_TORCH_COMPILE=1, ~8 minutes;
#                               CI runs a subset)
#   tools/test.sh --cpython     only CPython's own test suite under the evaluator
#                               (95 modules, ~4 minutes; CI runs a subset);
#                               writes docs/capture-cpython.md
#   DYNOC_PYTHON=3.12 tools/test.sh   (or 3.13) what depends on the Python
#                               version, under that version: the whole capture
#                               corpus and the real-program suite's subset
#                               (with --realworld: every model); makes
#                               .venv-3.12 first
#   tools/test.sh --all-pythons the above for 3.11, 3.12 and 3.13
#
# CI fuzzes each target of test/fuzz for DYNOC_FUZZ_SECONDS (default 30);
# longer campaigns: tools/fuzz.sh TARGET SECONDS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
realworld=0
jitcorpus=0
cpython=0
allpythons=0
for arg in "$@"; do
  case "$arg" in
    --realworld) realworld=1 ;;
    --jit-corpus) jitcorpus=1 ;;
    --cpython) cpython=1 ;;
    --all-pythons) allpythons=1 ;;
    -h|--help) sed -n '2,/^set /{/^set /!p}' "$0" | cut -c3-; exit 0 ;;
    *) echo "tools/test.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
if ((allpythons)); then
  for v in 3.11 3.12 3.13; do
    echo "[test] CPython $v: the capture corpus and the real-program suite" >&2
    DYNOC_PYTHON=$v "$0" $( ((realworld)) && echo --realworld)
  done
  exit 0
fi
tools/bootstrap.sh
# version_suites VERSION: the corpus and the model suite under that Python
# (`dynoc capture` runs DYNOC_PYTHON; pytest and Dynamo run it too).
version_suites() {
  local v="$1" corpus="${2:-all}" models="${3:-}" py="$root/.venv-$1/bin/python"
  [ "$v" = 3.11 ] && py="$root/.venv/bin/python"
  # The other versions' environments are shared by every checkout of this
  # machine (tools/bootstrap.sh): this checkout's package and extensions.
  export PYTHONPATH="$root/lib/capture/python:$root/bazel-bin/lib/capture:$root/bazel-bin/lib/runtime/python"
  echo "[test] CPython $v: the capture corpus ($corpus programs), each against Dynamo on $v" >&2
  DYNOC_PYTHON="$py" DYNOC_CORPUS="$corpus" "$py" -m pytest -q -rf -n 2 test/capture/test_corpus.py
  if [ -n "$models" ]; then
    echo "[test] CPython $v: real programs $models" >&2
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py --models "$models"
  elif ((realworld)); then
    echo "[test] CPython $v: the real-program suite (every model)" >&2
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py
  else
    echo "[test] CPython $v: the real-program suite's fast subset" >&2
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py --ci
  fi
}
case "${DYNOC_PYTHON:-}" in
  3.11|3.12|3.13)
    bazel build //...
    version_suites "$DYNOC_PYTHON"
    echo "[test] CPython $DYNOC_PYTHON: all tests passed" >&2
    exit 0 ;;
esac
if ((jitcorpus)); then
  bazel build //...
  echo "[test] the capture corpus in process (every program)" >&2
  DYNOC_JIT_CORPUS=all exec .venv/bin/python -m pytest -q -rf -n 2 test/capture/test_inprocess.py
fi
if ((cpython)); then
  bazel build //...
  echo "[test] CPython's test suite under the evaluator (test/cpython, every module)" >&2
  exec .venv/bin/python test/cpython/cpython_suite.py --table docs/capture-cpython.md
fi
if ((realworld)); then
  bazel build //...
  echo "[test] the real-program suite (test/realworld, every model)" >&2
  exec .venv/bin/python test/realworld/run_suite.py --table docs/capture-models.md
fi
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
# The runtime readers' fuzz targets over their corpora and regression inputs,
# under AddressSanitizer (the graph and build targets' replays run in the
# normal `bazel test //...` below, and fuzzed under ASan just after).
echo "[test] fuzz regression inputs of the runtime's readers under --config=asan" >&2
bazel test --config=asan //test/fuzz:manifest_replay //test/fuzz:guards_replay \
  //test/fuzz:safetensors_replay //test/fuzz:npy_replay //test/fuzz:elf_replay
bazel build //...
bazel test //...
echo "[test] lit: IR, passes and build diagnostics" >&2
.venv/bin/lit -sv test/ir
echo "[test] every fuzz target, ${DYNOC_FUZZ_SECONDS:-30} s each under libFuzzer + ASan + UBSan (tools/fuzz.sh)" >&2
tools/fuzz.sh all "${DYNOC_FUZZ_SECONDS:-30}"
echo "[test] end to end, the CUDA build (no GPU here: the GPU runs skip), two gloo ranks (test/distributed), and the capture corpus (each program against PyTorch's Dynamo)" >&2
.venv/bin/python -m pytest -q -rs -n 2 test/e2e test/gpu test/distributed test/capture
echo "[test] CPython's test suite under the evaluator: the fast subset (tools/test.sh --cpython runs all)" >&2
.venv/bin/python test/cpython/cpython_suite.py --ci
echo "[test] real programs: the fast subset (tools/test.sh --realworld runs all)" >&2
.venv/bin/python test/realworld/run_suite.py --ci
# 3.12 and 3.13: the corpus programs that between them use every opcode the
# corpus compiles to on that version, and two models (DYNOC_PYTHON=3.12
# tools/test.sh runs the whole corpus and the suite's subset).
for v in 3.12 3.13; do
  if ! ls -d "$HOME/.pyenv/versions/$v".* >/dev/null 2>&1 && ! command -v "python$v" >/dev/null; then
    echo "[test] CPython $v: skipped, this machine has no CPython $v (pyenv or python$v on PATH)" >&2
    continue
  fi
  DYNOC_PYTHON=$v tools/bootstrap.sh
  (version_suites $v opcodes bert-seqcls-labels,gpt2-lm-labels)
done
echo "[test] all tests passed" >&2
