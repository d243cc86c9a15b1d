"""Trains from the step .so that examples/distributed/train.py's capture
built, on every rank, with the rank's collectives through torch.distributed
(dynoc.TorchDistributedCommunicator: gloo on the CPU, NCCL on GPUs), and
checks the result against eager PyTorch running the same steps.

    RANK=r WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29501 \\
        python3 examples/distributed/run.py STEP.so DATA_DIR [--steps N] [--device cuda] [--ddp]
            [--communicator torch|nccl|gloo] [--cuda-graphs on|off]

Each rank prints its loss per step, then the largest relative difference of
its parameters from eager's after the same steps (eager first runs the 3
steps the capture ran, then N more) and whether every rank holds the same
parameters; on GPUs, how many cudaGraphLaunch calls the steps made (with
libdynrt's NCCL communicator, the steps from the third on replay a CUDA
graph that holds their all-reduces). Exit code 1 if the difference is over
--tolerance.
"""
import argparse
import os
import re
import sys

import numpy as np
import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import train  # noqa: E402  (the model and the step)

import dynoc  # noqa: E402


def graph_launches(step):
    """(how many cudaGraphLaunch calls `step()` made, its result): CUPTI,
    through torch.profiler, sees libdynrt's calls too."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        result = step()
        torch.cuda.synchronize()
    return sum(e.count for e in prof.key_averages() if e.key == "cudaGraphLaunch"), result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("so")
    ap.add_argument("data")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--tolerance", type=float, default=1e-5)
    ap.add_argument("--ddp", action="store_true",
                    help="eager's model is a DistributedDataParallel module (the "
                         "capture's was: train.py --ddp)")
    ap.add_argument("--communicator", default="torch", choices=["torch", "nccl", "gloo"],
                    help="torch: dynoc.TorchDistributedCommunicator (torch.distributed's "
                         "process group); nccl: libdynrt's own (dynoc.NcclCommunicator, "
                         "--device cuda); gloo: libdynrt's own gloo communicator "
                         "(dynoc.GlooCommunicator, the CPU)")
    ap.add_argument("--cuda-graphs", default="on", choices=["on", "off"],
                    help="on (dynoc.load's default): from its third step the model replays "
                         "a CUDA graph where its communicator can capture collectives "
                         "(libdynrt's NCCL one); the run counts the cudaGraphLaunch calls")
    a = ap.parse_args()
    if a.device == "cuda":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", os.environ["RANK"])))
    dist.init_process_group("nccl" if a.device == "cuda" else "gloo")
    rank = dist.get_rank()
    device = torch.device(a.device, torch.cuda.current_device()) if a.device == "cuda" \
        else torch.device("cpu")
    x = torch.from_numpy(np.load(os.path.join(a.data, f"x{rank}.npy"))).to(device)
    y = torch.from_numpy(np.load(os.path.join(a.data, f"y{rank}.npy"))).to(device)
    # Eager: the capture's steps, then the same steps as the .so.
    model, opt, _, _ = train.make(rank, device, a.ddp)
    eager = train.step_function(model, opt, a.ddp)
    for _ in range(train.STEPS + a.steps):
        want = eager(x, y)
    communicator = {"nccl": dynoc.NcclCommunicator, "gloo": dynoc.GlooCommunicator,
                    "torch": dynoc.TorchDistributedCommunicator}[a.communicator]()
    m = dynoc.load(a.so, cuda_graphs=a.cuda_graphs == "on", communicator=communicator)
    launches = 0
    for i in range(a.steps):
        if a.device == "cuda":
            n, loss = graph_launches(lambda: m(x, y))
            launches += n
        else:
            loss = m(x, y)
        print(f"rank {rank} step {i + 1} loss {loss.item():.7g}", flush=True)
    if a.device == "cuda":
        print(f"rank {rank}: cudaGraphLaunch calls: {launches} in {a.steps} steps "
              f"(CUDA graphs {a.cuda_graphs})", flush=True)
    params = dict((model.module if a.ddp else model).named_parameters())
    worst, mine = 0.0, []
    for name in m.weight_names():
        # The model's parameters, as capture named them (the step's `model`
        # is a local of step_function: L['model'][0].weight).
        prefix = re.match(r"[LG]\['model'\](\.module)?", name)
        if not prefix:
            continue
        key = re.sub(r"\[(\d+)\]", r".\1", name[prefix.end():]).lstrip(".")
        w = m.read_weight(name)
        mine.append(w.flatten())
        p = params[key].detach()
        worst = max(worst, ((w - p).norm() / p.norm()).item())
    flat = torch.cat(mine)
    first = flat.clone()
    dist.broadcast(first, src=0)
    same = torch.equal(flat, first)
    ok = worst <= a.tolerance and same
    print(f"rank {rank}: loss {loss.item():.7g} (eager {want.item():.7g}); parameters vs "
          f"eager's: {worst:.3g} relative; the same on every rank: {same} -> "
          f"{'MATCH' if ok else 'MISMATCH'}", flush=True)
    del m  # the model, then its communicator, go before the process group
    if a.communicator == "nccl":
        communicator.close()
    dist.barrier()  # no rank tears its group down while another still uses it
    dist.destroy_process_group()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
