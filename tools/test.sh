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
#   tools/test.sh --slow        only the long end-to-end tests CI leaves out
#                               (pytest's `slow` marker: training from C++, the
#                               transformers models in bf16, ...; ~3 minutes)
#   tools/test.sh --cpython     only CPython's own test suite under the evaluator
#                               (95 modules, ~4 minutes; CI runs a subset);
#                               writes docs/capture-cpython.md
#   tools/test.sh --opinfo      only the op-coverage suite: PyTorch's OpInfo
#                               samples through dynoc.compile on the CPU
#                               (~10 minutes; CI runs a fixed sample); writes
#                               docs/op-coverage.md
#   DYNOC_PYTHON=3.12 tools/test.sh   (or 3.13) what depends on the Python
#                               version, under that version: the whole capture
#                               corpus and the real-program suite's subset
#                               (with --realworld: every model); makes
#                               .venv-3.12 first
#   tools/test.sh --all-pythons the above for 3.11, 3.12 and 3.13
#   tools/test.sh --torch-versions   the wheel and the in-process JIT tests
#                               under other torch releases than the build's
#                               2.13 (DYNOC_TORCH_VERSIONS, default "2.11.0
#                               2.12.1 2.14.1": PyPI's builds, several
#                               GB each, kept once per machine under
#                               ~/.cache/dynoc/torch-VERSION)
#
# CI fuzzes each target of test/fuzz for DYNOC_FUZZ_SECONDS (default 10);
# longer campaigns: tools/fuzz.sh TARGET SECONDS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Each stage's line says how long the run has taken so far.
start=$SECONDS
say() { printf '[test +%dm%02ds] %s\n' $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60)) "$*" >&2; }
realworld=0
slow=0
jitcorpus=0
cpython=0
opinfo=0
allpythons=0
torchversions=0
for arg in "$@"; do
  case "$arg" in
    --realworld) realworld=1 ;;
    --jit-corpus) jitcorpus=1 ;;
    --slow) slow=1 ;;
    --cpython) cpython=1 ;;
    --opinfo) opinfo=1 ;;
    --all-pythons) allpythons=1 ;;
    --torch-versions) torchversions=1 ;;
    -h|--help) sed -n '2,/^set /{/^set /!p}' "$0" | cut -c3-; exit 0 ;;
    *) echo "tools/test.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done
if ((allpythons)); then
  for v in 3.11 3.12 3.13; do
    say "CPython $v: the capture corpus and the real-program suite"
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
  export PYTHONPATH="$root/python:$root/bazel-bin/lib/capture:$root/bazel-bin/lib/runtime/python"
  say "CPython $v: the capture corpus ($corpus programs), each against Dynamo on $v"
  DYNOC_PYTHON="$py" DYNOC_CORPUS="$corpus" "$py" -m pytest -q -rf -n 2 test/capture/test_corpus.py
  if [ -n "$models" ]; then
    say "CPython $v: real programs $models"
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py --models "$models"
  elif ((realworld)); then
    say "CPython $v: the real-program suite (every model)"
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py
  else
    say "CPython $v: the real-program suite's fast subset"
    DYNOC_PYTHON="$py" "$py" test/realworld/run_suite.py --ci
  fi
}
case "${DYNOC_PYTHON:-}" in
  3.11|3.12|3.13)
    bazel build //...
    version_suites "$DYNOC_PYTHON"
    say "CPython $DYNOC_PYTHON: all tests passed"
    exit 0 ;;
esac
if ((jitcorpus)); then
  bazel build //...
  say "the capture corpus in process (every program)"
  DYNOC_JIT_CORPUS=all exec .venv/bin/python -m pytest -q -rf -n 2 test/capture/test_inprocess.py
fi
if ((slow)); then
  bazel build //...
  say "the long end-to-end tests (pytest -m slow)"
  exec .venv/bin/python -m pytest -q -rs -n 2 -m slow test/e2e test/gpu test/distributed test/capture
fi
if ((cpython)); then
  bazel build //...
  say "CPython's test suite under the evaluator (test/cpython, every module)"
  exec .venv/bin/python test/cpython/cpython_suite.py --table docs/capture-cpython.md
fi
if ((opinfo)); then
  bazel build //...
  say "the op-coverage suite (test/opinfo, every OpInfo of the suite)"
  exec .venv/bin/python test/opinfo/opinfo_suite.py --table docs/op-coverage.md
fi
if ((torchversions)); then
  bazel build //...
  failed=""
  for v in ${DYNOC_TORCH_VERSIONS:-2.11.0 2.12.1 2.14.1}; do
    venv="$(tools/torch_venv.sh "$v")"
    say "torch $v: the wheel installed beside it (test/e2e/test_wheel.py), and the in-process JIT tests"
    DYNOC_TEST_TORCH_VENV="$venv" .venv/bin/python -m pytest -q -rf test/e2e/test_wheel.py ||
      failed="$failed $v(wheel)"
    PYTHONPATH="$root/python:$root/bazel-bin/lib/capture:$root/bazel-bin/lib/runtime/python" \
      "$venv/bin/python" -m pytest -q -rf -n 2 -p no:cacheprovider test/e2e/test_jit.py \
      test/e2e/test_cpu_ops.py test/e2e/test_jit_build_failures.py || failed="$failed $v(jit)"
  done
  [ -z "$failed" ] || { say "failed under torch:$failed"; exit 1; }
  say "every torch version passed"
  exit 0
fi
if ((realworld)); then
  bazel build //...
  say "the real-program suite (test/realworld, every model)"
  exec .venv/bin/python test/realworld/run_suite.py --table docs/capture-models.md
fi
say "generated dialect is up to date"
.venv/bin/python lib/ir/tools/gen_aten_ops.py --check
say "the dynoc package's floors hold: no import cycle, none across floors (tools/check_imports.py)"
.venv/bin/python tools/check_imports.py
say "bazel build + unit tests"
bazel build //...
# The runtime's tests under AddressSanitizer and ThreadSanitizer; they use the
# dynoc binary just built (see .bazelrc), then the normal build is restored.
for san in asan tsan; do
  say "runtime tests under --config=$san"
  # The models come from a binary Bazel does not track: never reuse results.
  bazel test --config=$san --nocache_test_results \
    --test_env=DYNOC_BIN="$root/bazel-bin/tools/dynoc/dynoc" \
    //test/unit:runtime_test //test/unit:model_run_test //test/unit:threads_test \
    //test/unit:gloo_communicator_test
done
# The runtime readers' fuzz targets over their corpora and regression inputs,
# under AddressSanitizer (the graph and build targets' replays run in the
# normal `bazel test //...` below, and fuzzed under ASan just after).
say "fuzz regression inputs of the runtime's readers under --config=asan"
bazel test --config=asan //test/fuzz:manifest_replay //test/fuzz:guards_replay \
  //test/fuzz:safetensors_replay //test/fuzz:npy_replay //test/fuzz:elf_replay
bazel build //...
bazel test //...
say "lit: IR, passes and build diagnostics"
.venv/bin/lit -sv test/ir
say "every fuzz target, ${DYNOC_FUZZ_SECONDS:-10} s each under libFuzzer + ASan + UBSan (tools/fuzz.sh)"
tools/fuzz.sh all "${DYNOC_FUZZ_SECONDS:-10}"
say "end to end, the CUDA build (no GPU here: the GPU runs skip), two gloo ranks (test/distributed), and the capture corpus (each program against PyTorch's Dynamo); the tests marked slow are left to tools/test.sh --slow"
.venv/bin/python -m pytest -q -rs -n 2 -m "not slow" test/e2e test/gpu test/distributed test/capture
say "CPython's test suite under the evaluator: the fast subset (tools/test.sh --cpython runs all)"
.venv/bin/python test/cpython/cpython_suite.py --ci
say "op coverage: PyTorch's OpInfo samples, the fixed CI sample (tools/test.sh --opinfo runs all)"
.venv/bin/python test/opinfo/opinfo_suite.py --ci
say "real programs: the fast subset (tools/test.sh --realworld runs all)"
.venv/bin/python test/realworld/run_suite.py --ci
# 3.12 and 3.13: the corpus programs that between them use every opcode the
# corpus compiles to on that version, and a model each (DYNOC_PYTHON=3.12
# tools/test.sh runs the whole corpus and the suite's subset).
declare -A version_model=([3.12]=bert-seqcls-labels [3.13]=gpt2-lm-labels)
for v in 3.12 3.13; do
  if ! ls -d "$HOME/.pyenv/versions/$v".* >/dev/null 2>&1 && ! command -v "python$v" >/dev/null; then
    say "CPython $v: skipped, this machine has no CPython $v (pyenv or python$v on PATH)"
    continue
  fi
  DYNOC_PYTHON=$v tools/bootstrap.sh
  (version_suites $v opcodes "${version_model[$v]}")
done
say "all tests passed"
