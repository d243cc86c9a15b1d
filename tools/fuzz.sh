#!/usr/bin/env bash
# Runs one of dynoc's fuzz targets (test/fuzz/) under libFuzzer with
# AddressSanitizer and UndefinedBehaviorSanitizer, built by clang through
# Bazel's --config=fuzz (in an output base of its own, so the normal build is
# not disturbed).
#
#   tools/fuzz.sh TARGET SECONDS [LIBFUZZER_ARGS...]   fuzz TARGET for SECONDS
#   tools/fuzz.sh all SECONDS                           each target in turn
#   tools/fuzz.sh --list                                the targets
#
# Starts from the committed seed corpus (test/fuzz/corpus/TARGET) and the
# regression inputs (test/fuzz/regressions/TARGET); what the run adds to the
# corpus stays in ~/.cache/dynoc-fuzz/TARGET. A crash, leak or timeout is
# written to ~/.cache/dynoc-fuzz/artifacts/ and ends the run with exit 1:
# fix it, then commit the input under test/fuzz/regressions/TARGET/.
# Ends with one line: target, executions, seconds, coverage, crashes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
targets=(graph build manifest guards safetensors npy elf)
usage() { sed -n 2,16p "$0" | cut -c3-; }
case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  --list) printf '%s\n' "${targets[@]}"; exit 0 ;;
  "") usage >&2; exit 2 ;;
esac
target="$1"; seconds="${2:-}"; shift 2 || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "tools/fuzz.sh: SECONDS must be a whole number, got '${seconds}' (see --help)" >&2
  exit 2
fi
if [ "$target" != all ] && [[ ! " ${targets[*]} " =~ " $target " ]]; then
  echo "tools/fuzz.sh: unknown target '$target'; the targets are: ${targets[*]}" >&2
  exit 2
fi
tools/bootstrap.sh
# One output base per checkout: Bazel ties an output base to one workspace.
base="$HOME/.cache/dynoc-bazel-fuzz/$(printf %s "$root" | sha256sum | cut -c1-12)"
work="$HOME/.cache/dynoc-fuzz"
mkdir -p "$work/artifacts"
run_one() {
  local t="$1" bin corpus log
  shift
  echo "[fuzz] building $t under --config=fuzz (clang, libFuzzer, ASan, UBSan)" >&2
  # The sanitizers' runtime symbols make gold warn once per symbol: noise.
  bazel --output_base="$base" build --config=fuzz "//test/fuzz:${t}_fuzzer" 2>&1 |
    grep -v "Cannot export local symbol" >&2
  bin="$(bazel --output_base="$base" info --config=fuzz bazel-bin 2>/dev/null)/test/fuzz/${t}_fuzzer"
  corpus="$work/$t"
  mkdir -p "$corpus"
  local seeds=()
  # The build target starts from the graph files the graph target reads.
  local seed="$t"
  [ "$t" = build ] && seed=graph
  for d in "test/fuzz/corpus/$seed" "test/fuzz/regressions/$t"; do
    [ -d "$d" ] && seeds+=("$d")
  done
  local dict=()
  [ -f "test/fuzz/dicts/$t.dict" ] && dict=(-dict="test/fuzz/dicts/$t.dict")
  log="$work/$t.log"
  echo "[fuzz] $t: ${seconds} s from $corpus ${seeds[*]} (log: $log)" >&2
  local rc=0
  # No leak checks: an MLIRContext kept across inputs is not a leak.
  ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer \
  ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}" \
    "$bin" -max_total_time="$seconds" -print_final_stats=1 -timeout=25 \
    -rss_limit_mb=4096 -max_len=65536 -artifact_prefix="$work/artifacts/$t-" \
    "${dict[@]}" "$@" "$corpus" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  local execs cov
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  cov="$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' "$log" | tail -1)"
  if ((rc != 0)); then
    tail -40 "$log" >&2
    echo "[fuzz] $t: FAILED (exit $rc) after ${execs:-?} executions; the input is in $work/artifacts/ (see $log)" >&2
    echo "fuzz $t: executions ${execs:-?} seconds $seconds coverage ${cov:-?} crashes 1"
    return 1
  fi
  echo "fuzz $t: executions ${execs:-?} seconds $seconds coverage ${cov:-?} crashes 0"
}
if [ "$target" = all ]; then
  failed=0
  for t in "${targets[@]}"; do run_one "$t" "$@" || failed=1; done
  exit "$failed"
fi
run_one "$target" "$@"
