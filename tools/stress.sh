#!/usr/bin/env bash
# The stress mode (issue 49): repeats the tests whose failures depend on
# timing (the distributed tests on two gloo ranks, the runtime's thread tests,
# the in-process JIT's dispatch tests) many times while the machine is loaded,
# and counts runs and failures per test. After `bazel build //...`.
#
#   tools/stress.sh [RUNS] [LOAD]   RUNS repetitions (default 20) of each test
#                                   under LOAD: `stress-ng` (default: a CPU
#                                   hog per core), `none`, or `suites` (the
#                                   capture corpus running beside them)
#
# Prints one line per test (runs, failures) and the failing outputs' last
# lines; exit 1 if any run failed. docs/reliability.md keeps the figures.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-20}"
load="${2:-stress-ng}"
py=.venv/bin/python
[ -x "$py" ] || { echo "tools/stress.sh: run tools/bootstrap.sh and bazel build //... first" >&2; exit 2; }
tests=(
  "test/distributed/test_collectives.py::test_a_rank_exits_cleanly_right_after_its_last_collective"
  "test/distributed/test_collectives.py::test_coalesced_collectives_record_per_tensor_and_run_as_eager"
  "test/e2e/test_jit_dispatch.py"
)
loader=""
case "$load" in
  stress-ng)
    if ! command -v stress-ng >/dev/null; then
      echo "tools/stress.sh: stress-ng is missing (Debian: apt-get install stress-ng)" >&2
      exit 2
    fi
    stress-ng --cpu "$(nproc)" --timeout 0 >/dev/null 2>&1 &
    loader=$! ;;
  suites)
    (while true; do "$py" -m pytest -q -x test/capture/test_corpus.py >/dev/null 2>&1; done) &
    loader=$! ;;
  none) ;;
  *) echo "tools/stress.sh: unknown load '$load' (stress-ng, suites, none)" >&2; exit 2 ;;
esac
trap '[ -n "$loader" ] && kill -- "$loader" 2>/dev/null; pkill -P $$ 2>/dev/null' EXIT
status=0
log="$(mktemp)"
for t in "${tests[@]}"; do
  failed=0
  for ((i = 1; i <= runs; i++)); do
    if ! "$py" -m pytest -q -x -p no:cacheprovider "$t" >"$log" 2>&1; then
      failed=$((failed + 1))
      echo "  $t: run $i failed:" >&2
      tail -n 5 "$log" | sed 's/^/    /' >&2
    fi
  done
  echo "$t: $runs runs, $failed failed (load: $load)"
  ((failed)) && status=1
done
rm -f "$log"
exit $status
