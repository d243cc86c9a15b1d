#!/usr/bin/env bash
# The GPU tests, on the GPU machine (the device tool), over artifacts built on
# a machine without a GPU:
#
#   here:  bazel build //... && tools/build_gpu_artifacts.py
#          (which runs bench/train/gpu.py prepare: the training steps)
#   there: tools/test_gpu.sh            (carry build/gpu)
#
# Runs the op cases and the model suite against torch eager on the GPU
# (test/gpu/test_cuda_run.py), training steps against eager's
# (test/gpu/test_cuda_train.py), the 8-thread test (one model, a stream and a
# context per thread, CUDA graphs on), dynrt-bench and a profile of two models,
# and compute-sanitizer's memcheck on a transformer block, CNNs and two
# training steps. Prints a summary last (docs/status.md keeps the latest).
# dynoc.compile in the same process on the GPU (it builds there) is
# tools/gpu_jit.sh's.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
art="$root/build/gpu"
py="${PYTHON:-python3}"
if ! "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "test_gpu.sh: no CUDA GPU here; run it on the GPU machine" >&2
  exit 1
fi
[ -d "$art/models" ] || { echo "test_gpu.sh: $art is missing: run tools/build_gpu_artifacts.py on the build machine and carry build/gpu" >&2; exit 1; }
. "$root/tools/gpu_env.sh"
export PYTHONPATH="$PYTHONPATH:$root/test/gpu:$root/test/e2e:$root/bench/cpu"
"$py" -c 'import torch; print("GPU:", torch.cuda.get_device_name(), "| torch", torch.__version__)'

status=0
summary=()
out="${OUT:-/tmp}"
"$py" -m pytest -q -p no:cacheprovider "$root/test/gpu/test_cuda_run.py" 2>&1 | tee "$out/pytest_gpu.log"
rc=${PIPESTATUS[0]}; [ $rc = 0 ] || status=1
summary+=("pytest test/gpu/test_cuda_run.py: $(tail -1 "$out/pytest_gpu.log")")
# Training steps (bench/train/gpu.py prepare built them) against eager's.
"$py" -m pytest -q -p no:cacheprovider "$root/test/gpu/test_cuda_train.py" 2>&1 | tee "$out/pytest_gpu_train.log"
rc=${PIPESTATUS[0]}; [ $rc = 0 ] || status=1
summary+=("pytest test/gpu/test_cuda_train.py: $(tail -1 "$out/pytest_gpu_train.log")")

for args in "bert_b1/model.so 1 32 --int64 1000" "encoder_block_b32/model.so 32 32 128" \
            "resnext_block_b1_bf16/model.so 1 256 28 28 --bf16"; do
  set -- $args
  line="$("$art/bin/threads_cuda" "$art/models/$1" "${@:2}" --iters 50 2>&1)"
  rc=$?; echo "$line"; [ $rc = 0 ] || status=1
  summary+=("8 threads, ${1%%/*}: ${line##*: }")
done

# dynrt-bench (libdynrt only) on a transformer block, with CUDA graphs and
# without; then where the time goes, from a profile.
for graphs in 1 0; do
  line="$(DYNRT_CUDA_GRAPHS=$graphs "$art/bin/dynrt-bench" "$art/models/encoder_block_b32/model.so" -n 200 --warmup 20 2>&1)"
  rc=$?; echo "$line"; [ $rc = 0 ] || status=1
  summary+=("dynrt-bench encoder_block_b32 (CUDA graphs $graphs): $(echo "$line" | grep -E "latency ms" | sed 's/^ *//')")
done
for args in "encoder_block_b32/model.so 32 32 128" "resnext_block_b1_bf16/model.so 1 256 28 28 --bf16"; do
  set -- $args
  line="$("$py" "$root/test/gpu/profile_summary.py" "$art/models/$1" "${@:2}" 2>&1)"
  rc=$?; echo "$line"; [ $rc = 0 ] || status=1
  summary+=("profile ${1%%/*}: $(echo "$line" | head -1 | sed 's/^[^:]*: //')")
done

san=compute-sanitizer
command -v $san >/dev/null || san=/usr/local/cuda/bin/compute-sanitizer
for args in "encoder_block_b1/model.so 1 32 128" "cnn_b1/model.so 1 3 32 32" \
            "mobilenet_block_b1/model.so 1 32 56 56"; do
  set -- $args
  log="$out/sanitizer_${1%%/*}.log"
  $san --tool memcheck --error-exitcode 9 "$art/bin/threads_cuda" "$art/models/$1" "${@:2}" --iters 2 > "$log" 2>&1
  rc=$?
  head -40 "$log"
  line="$(grep -E "ERROR SUMMARY|threads_cuda:" "$log" | tr '\n' ' ')"
  [ $rc = 0 ] || status=1
  summary+=("compute-sanitizer memcheck (${1%%/*}, 8 threads x 2 runs): ${line}")
done
# Training steps (examples/train's C++ loop): 3 steps, direct, captured and
# replayed, under memcheck.
for m in cnn_batchnorm tiny_gpt_adamw; do
  d="$art/train/$m"
  log="$out/sanitizer_train_$m.log"
  $san --tool memcheck --error-exitcode 9 "$art/bin/train" "$d/step.so" "$d/x.npy" "$d/y.npy" 3 > "$log" 2>&1
  rc=$?
  tail -5 "$log"
  [ $rc = 0 ] || status=1
  summary+=("compute-sanitizer memcheck (training step $m, 3 steps): $(grep -E "ERROR SUMMARY" "$log" | tr '\n' ' ')$([ $rc = 0 ] || echo "exit $rc")")
done

echo
echo "== test_gpu.sh summary =="
for s in "${summary[@]}"; do echo "  $s"; done
echo "  result: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
