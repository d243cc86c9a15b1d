"""The torch.distributed program of test/distributed/test_collectives.py and
tools/test_multigpu.sh: a tensor-parallel MLP (W1's output features and W2's
input features split over the ranks, the partial products all-reduced), then
an in-place all-reduce, a broadcast, an all-gather, a reduce-scatter and an
all-to-all.

    python3 collectives_program.py capture             (under dynoc capture)
    python3 collectives_program.py run MODEL.so [unbound] [WEIGHTS]

`run` runs the step eagerly (torch.distributed's collectives), then from
MODEL.so through dynoc.TorchDistributedCommunicator ("unbound": with none),
this rank's weight shards from WEIGHTS (its capture's weights file), and
prints `RESULT rank=R worst=E tp=T`: the largest relative difference from
eager, and of the tensor-parallel MLP from one process's whole one. DEVICE=cuda
runs on GPU LOCAL_RANK with NCCL (the capture: gloo on the CPU);
COMMUNICATOR=nccl then runs the model through libdynrt's own NCCL communicator
(dynoc.NcclCommunicator) instead of torch.distributed's; COMMUNICATOR=gloo, on
the CPU, through libdynrt's gloo communicator (dynoc.GlooCommunicator).
"""
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol

DEVICE = os.environ.get("DEVICE", "cpu")
if DEVICE == "cuda":
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", os.environ["RANK"])))
dist.init_process_group("nccl" if DEVICE == "cuda" else "gloo")
rank, world = dist.get_rank(), dist.get_world_size()
dev = torch.device(DEVICE, torch.cuda.current_device()) if DEVICE == "cuda" else "cpu"
torch.manual_seed(0)
w1 = torch.randn(16, 8).to(dev)   # [out, in]: rows split over the ranks
w2 = torch.randn(8, 16).to(dev)   # [out, in]: columns split over the ranks
shard = 16 // world
w1_local = w1[rank * shard:(rank + 1) * shard].clone()
w2_local = w2[:, rank * shard:(rank + 1) * shard].clone()


def mlp(x):
    h = torch.relu(x @ w1_local.t())               # column parallel
    partial = h @ w2_local.t()                     # row parallel
    return funcol.all_reduce(partial, "sum", dist.group.WORLD)


def step(x):
    y = mlp(x)
    z = y * 2
    dist.all_reduce(z, op=dist.ReduceOp.MAX)       # in place
    dist.broadcast(z, src=world - 1)
    gathered = torch.empty(world * z.shape[0], z.shape[1], device=z.device)
    dist.all_gather_into_tensor(gathered, z)
    scattered = torch.empty(z.shape[0] // world, z.shape[1], device=z.device)
    dist.reduce_scatter_tensor(scattered, z.contiguous())
    local = (x @ w1_local.t()).contiguous()        # this rank's own values
    swapped = torch.empty_like(local)
    dist.all_to_all_single(swapped, local)         # equal slices
    return y, gathered, scattered.sum(), swapped


torch.manual_seed(100)  # tensor parallel: every rank has the whole input
x = torch.randn(4, 8).to(dev)
if sys.argv[1] == "capture":
    torch.compile(step)(x)
    sys.exit(0)

import dynoc  # noqa: E402

# Eager, with torch.distributed's collectives. The functional all_reduce's
# result is an AsyncCollectiveTensor holding its Work until read: read here
# (clone), not by the garbage collection of an exiting interpreter, where
# releasing it aborts the process (docs/reliability.md, "Exit under load").
want = [t.clone() for t in step(x)]
unbound = len(sys.argv) > 3 and sys.argv[3] == "unbound"
weights = sys.argv[4] if len(sys.argv) > 4 else None  # this rank's shards
communicators = {"nccl": dynoc.NcclCommunicator, "gloo": dynoc.GlooCommunicator,
                 "torch": dynoc.TorchDistributedCommunicator,
                 None: dynoc.TorchDistributedCommunicator}
communicator = None if unbound else communicators[os.environ.get("COMMUNICATOR")]()
m = dynoc.load(sys.argv[2], weights=weights, communicator=communicator)
try:
    got = m(x)
except Exception as e:  # noqa: BLE001 - the test reads it
    print("ERROR", type(e).__name__, e, flush=True)
    # torch asks for this before exit: its workers may still hold the eager
    # collectives' tensors (docs/reliability.md, "Exit under load").
    dist.destroy_process_group()
    sys.exit(3)
worst = max(((g - w).abs().max() / w.abs().max().clamp_min(1e-12)).item()
            for g, w in zip(got, want))
full = torch.relu(x @ w1.t()) @ w2.t()
tp = ((got[0] - full).abs().max() / full.abs().max()).item()
print(f"RESULT rank={rank} worst={worst:.3g} tp={tp:.3g}", flush=True)
