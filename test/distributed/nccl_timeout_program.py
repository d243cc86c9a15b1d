"""tools/test_multigpu.sh's check that libdynrt's NCCL communicator bounds
what it waits for, on 2 GPU ranks:

1. rank 1 never joins: rank 0's dynrt_nccl_communicator_create fails after
   its 3 s timeout, naming the group, rather than waiting forever;
2. both ranks join and bind MODEL.so (test/distributed/collectives_program.py's
   build), then rank 1 leaves without running it: rank 0's collectives never
   complete, its communicator aborts them after the 5 s timeout, and its next
   run fails with a message naming the collective;
3. with a new communicator both ranks run the model twice (the second call
   captures it into a CUDA graph, collectives included, and replays it),
   then rank 1 stops: rank 0's next replay never completes, the watchdog
   aborts it after the 5 s timeout, and rank 0's next run fails naming the
   replay;
4. rank 0 then drops that model and its aborted communicator: the teardown
   returns (NCCL's abort of a communicator whose work a CUDA graph captured
   may still be running in the watchdog; the destructor does not wait).

    python3 nccl_timeout_program.py MODEL.so WEIGHTS_DIR

Prints `TIMEOUT rendezvous=ok collective=ok replay=ok teardown=ok` on rank 0
when all hold.
"""
import gc
import os
import sys
import threading
import time

import torch
import torch.distributed as dist

torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", os.environ["RANK"])))
dist.init_process_group("nccl")
rank = dist.get_rank()
import dynoc  # noqa: E402
from dynoc.runtime import model as _model  # noqa: E402

_dynrt = _model._dynrt
results = {}
# 1. A rendezvous rank 1 never comes to.
if rank == 0:
    t0 = time.perf_counter()
    try:
        _dynrt.nccl_communicator(_dynrt.nccl_unique_id(), 2, 0, torch.cuda.current_device(),
                                 "0", 3000)
        results["rendezvous"] = "joined?!"
    except _dynrt.Error as e:
        waited = time.perf_counter() - t0
        print(f"rank 0: {e} (after {waited:.1f} s)", flush=True)
        results["rendezvous"] = "ok" if "within 3000 ms" in str(e) and waited < 30 else str(e)
dist.barrier()
# 2. A collective rank 1 never issues.
communicator = dynoc.NcclCommunicator(timeout_s=5)
m = dynoc.load(sys.argv[1], weights=os.path.join(sys.argv[2], f"weights{rank}.safetensors"),
               communicator=communicator)
torch.manual_seed(100)
x = torch.randn(4, 8).cuda()
dist.barrier()
if rank == 1:
    time.sleep(20)  # alive, but issuing nothing
else:
    t0 = time.perf_counter()
    try:
        m(x)
        torch.cuda.synchronize()  # returns once the aborted collective does
        m(x)
        results["collective"] = "the second run succeeded?!"
    except Exception as e:  # noqa: BLE001
        waited = time.perf_counter() - t0
        print(f"rank 0: {type(e).__name__}: {e} (after {waited:.1f} s)", flush=True)
        text = str(e)
        results["collective"] = "ok" if ("did not complete within 5000 ms" in text
                                         or "NCCL reported an error" in text) else text
dist.barrier()
# 3. A CUDA graph replay whose collectives rank 1 never joins.
print(f"rank {rank}: case 3: a new communicator", flush=True)
communicator = dynoc.NcclCommunicator(timeout_s=5)
m = dynoc.load(sys.argv[1], weights=os.path.join(sys.argv[2], f"weights{rank}.safetensors"),
               communicator=communicator)
print(f"rank {rank}: case 3: loaded", flush=True)
for _ in range(2):  # a direct run, then the capture and its first replay
    m(x)
torch.cuda.synchronize()
print(f"rank {rank}: case 3: two runs", flush=True)
dist.barrier()
if rank == 1:
    time.sleep(20)
else:
    t0 = time.perf_counter()
    try:
        m(x)  # a replay
        print(f"rank 0: case 3: a replay queued", flush=True)
        # Polled, not synchronized: a replay the abort does not release
        # must fail this check, not hang it.
        stream = torch.cuda.current_stream()
        while not stream.query() and time.perf_counter() - t0 < 30:
            time.sleep(0.05)
        if not stream.query():
            raise RuntimeError("the replay still runs 30 s later: not bounded by the timeout")
        print(f"rank 0: case 3: the replay ended after {time.perf_counter() - t0:.1f} s; "
              "running again", flush=True)
        m(x)
        results["replay"] = "the run after the replay succeeded?!"
    except Exception as e:  # noqa: BLE001
        waited = time.perf_counter() - t0
        print(f"rank 0: {type(e).__name__}: {e} (after {waited:.1f} s)", flush=True)
        text = str(e)
        results["replay"] = "ok" if ("CUDA graph replay" in text
                                     and "did not complete within 5000 ms" in text) else text
    # 4. The teardown, on a thread: a destructor that waits for the abort
    # must fail this check, not hang the program.
    holder = [m, communicator]
    del m, communicator
    dropped = threading.Event()

    def drop():
        holder.clear()
        gc.collect()
        dropped.set()

    t0 = time.perf_counter()
    threading.Thread(target=drop, daemon=True).start()
    results["teardown"] = "ok" if dropped.wait(20) else "blocked for 20 s"
    print(f"rank 0: case 4: teardown {results['teardown']} after "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    print(f"TIMEOUT rendezvous={results.get('rendezvous')} "
          f"collective={results.get('collective')} replay={results.get('replay')} "
          f"teardown={results.get('teardown')}", flush=True)
os._exit(0)  # the aborted communicators and the process group: no orderly teardown
