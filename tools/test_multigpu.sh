#!/usr/bin/env bash
# The multi-GPU runs, on a machine of 2+ GPUs (the device tool's
# nvidia-h100-x2 and larger kinds), over artifacts built without a GPU:
#
#   here:  bazel build //... && tools/build_multigpu_artifacts.py
#   there: tools/test_multigpu.sh      (carry build/gpu/bin and build/gpu/distributed)
#
# Runs examples/distributed/run.py on 2 ranks, one GPU each, NCCL: the
# data-parallel step .so (the gradients averaged by the step, then by a DDP
# module) trains 10 steps on every rank, each rank's
# parameters checked against eager PyTorch's on its GPU (same steps, NCCL
# all-reduces) and against the other rank's. Then
# test/distributed/collectives_program.py: tensor-parallel layers and the
# four collectives from one .so, each rank with its weight shards, against
# eager and the one-process MLP; both again through libdynrt's own NCCL
# communicator, which must also bound a rendezvous, a collective and a CUDA
# graph replay's collectives that a rank never comes to. Each data-parallel
# step replays a CUDA graph that holds its all-reduces (checked: 9 replays in
# 10 steps), and the DDP step runs again with CUDA graphs off.
# Prints a summary last.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
art="$root/build/gpu"
py="${PYTHON:-python3}"
gpus="$("$py" -c 'import torch; print(torch.cuda.device_count())')"
if [ "${gpus:-0}" -lt 2 ]; then
  echo "test_multigpu.sh: $gpus GPU(s) here; it needs 2 or more" >&2
  exit 1
fi
[ -f "$art/distributed/step.so" ] || { echo "test_multigpu.sh: $art/distributed is missing: run tools/build_multigpu_artifacts.py on the build machine and carry it" >&2; exit 1; }
. "$root/tools/gpu_env.sh"
"$py" -c 'import torch; print("GPUs:", torch.cuda.device_count(), "x", torch.cuda.get_device_name(), "| torch", torch.__version__, "| NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
out="${OUT:-/tmp}"
port=$(( 29500 + RANDOM % 1000 ))
status=0
# Data parallel: the step averaging the gradients itself, then a DDP module's,
# then the DDP step through libdynrt's own NCCL communicator
# (dynoc.NcclCommunicator) instead of torch.distributed's.
for variant in step ddp_step nccl nccl_nographs; do
  so=$variant; flag=""
  [ $variant = ddp_step ] && flag="--ddp"
  [ $variant = nccl ] && { so=ddp_step; flag="--ddp --communicator nccl"; }
  [ $variant = nccl_nographs ] && { so=ddp_step; flag="--ddp --communicator nccl --cuda-graphs off"; }
  port=$(( port + 1 ))
  pids=()
  for r in 0 1; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 300 "$py" "$root/examples/distributed/run.py" "$art/distributed/$so.so" \
      "$art/distributed/data" --steps 10 --device cuda --tolerance 1e-4 $flag > "$out/${variant}_rank$r.log" 2>&1 &
    pids+=($!)
  done
  for r in 0 1; do
    wait "${pids[$r]}" || status=1
    grep -v Warning "$out/${variant}_rank$r.log" | tail -5
  done
  # With CUDA graphs on, steps 2-10 replay a CUDA graph that holds their
  # all-reduces (the first runs directly, the second captures the graph,
  # then replays it), through torch.distributed's ProcessGroupNCCL and
  # through libdynrt's NCCL communicator alike.
  if [ $variant != nccl_nographs ]; then
    for r in 0 1; do
      grep -q "cudaGraphLaunch calls: 9 in 10 steps" "$out/${variant}_rank$r.log" || {
        echo "$variant: rank $r: expected 9 CUDA graph replays in 10 steps"; status=1; }
    done
  fi
done
# Tensor-parallel layers and the four collectives, each rank with its shards,
# through torch.distributed's NCCL, then libdynrt's.
for communicator in torch nccl; do
  port=$(( port + 1 ))
  pids=()
  for r in 0 1; do
    DEVICE=cuda COMMUNICATOR=$communicator RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 300 "$py" "$root/test/distributed/collectives_program.py" run \
      "$art/distributed/collectives/model.so" bound \
      "$art/distributed/collectives/weights$r.safetensors" > "$out/tp_${communicator}$r.log" 2>&1 &
    pids+=($!)
  done
  for r in 0 1; do
    wait "${pids[$r]}" || status=1
    line="$(grep RESULT "$out/tp_${communicator}$r.log")"
    echo "$communicator: ${line:-$(tail -5 "$out/tp_${communicator}$r.log")}"
    # eager's results and the one-process MLP's, within 1e-5 (relative)
    echo "$line" | "$py" -c 'import sys; f = dict(kv.split("=") for kv in sys.stdin.read().split()[1:]); sys.exit(0 if float(f["worst"]) <= 1e-5 and float(f["tp"]) <= 1e-5 else 1)' || status=1
  done
done
# libdynrt's NCCL communicator bounds a rendezvous, a collective and a CUDA
# graph replay's collectives that a rank never comes to.
port=$(( port + 1 ))
pids=()
for r in 0 1; do
  RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    timeout 120 "$py" "$root/test/distributed/nccl_timeout_program.py" \
    "$art/distributed/collectives/model.so" "$art/distributed/collectives" \
    > "$out/timeout$r.log" 2>&1 &
  pids+=($!)
done
for r in 0 1; do wait "${pids[$r]}" || status=1; done
grep -q "TIMEOUT rendezvous=ok collective=ok replay=ok teardown=ok" "$out/timeout0.log" || status=1
echo
echo "== test_multigpu.sh summary =="
for r in 0 1; do echo "  data parallel (by hand), rank $r: $(grep -E "^rank $r:" "$out/step_rank$r.log" || echo "no result (see step_rank$r.log)")"; done
for r in 0 1; do echo "  data parallel (DDP module), rank $r: $(grep -E "^rank $r:" "$out/ddp_step_rank$r.log" || echo "no result (see ddp_step_rank$r.log)")"; done
for r in 0 1; do echo "  data parallel (DDP module, libdynrt's NCCL communicator), rank $r: $(grep -E "^rank $r:" "$out/nccl_rank$r.log" || echo "no result (see nccl_rank$r.log)")"; done
for r in 0 1; do echo "  data parallel (DDP module, libdynrt's NCCL communicator, CUDA graphs off), rank $r: $(grep -E "^rank $r:" "$out/nccl_nographs_rank$r.log" || echo "no result (see nccl_nographs_rank$r.log)")"; done
for c in torch nccl; do for r in 0 1; do echo "  tensor parallel + collectives ($c communicator), rank $r: $(grep RESULT "$out/tp_$c$r.log" || echo "no result (see tp_$c$r.log)")"; done; done
echo "  timeouts (libdynrt's NCCL communicator): $(grep TIMEOUT "$out/timeout0.log" || echo "no result (see timeout0.log)")"
grep "rank 0:" "$out/timeout0.log" | sed 's/^/    /'
echo "  result: $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
