"""Data-parallel training with torch.distributed, the way dynoc captures it:
each rank computes the gradient of its own batch, all-reduces it to the mean
(`dist.all_reduce(p.grad, op=AVG)`), and steps SGD with momentum, so every
rank keeps the same parameters. `torch.compile(train_step)` is the region:
under `dynoc capture` it becomes one training-step graph with the four
gradient all-reduces in it, the same on every rank.

    # two ranks capture (gloo on the CPU; the graphs are the same for a GPU),
    # each into out/dp/rank<R>
    torchrun --no-python --nproc_per_node=2 \\
        dynoc capture examples/distributed/train.py -o out/dp -- out/data
    dynoc build out/dp/rank0/step_1.mlir -o out/step.so   # one build for every rank

then examples/distributed/run.py trains from the .so (docs/distributed.md).
With --ddp the model is a DistributedDataParallel module instead, which
averages the gradients itself (no all-reduce in the step function); dynoc
captures the same step graph from it. Without dynoc (`python3 train.py DIR
[--ddp]`) it trains eagerly. Writes each rank's batch to DIR/x<rank>.npy,
DIR/y<rank>.npy.
"""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

STEPS = 3  # the steps the capture runs (the .so continues from there)


def make(rank, device, ddp=False):
    """The model (wrapped in DistributedDataParallel with `ddp`), its
    optimizer and this rank's batch (seeded: the same on every run)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4)).to(device)
    if ddp:
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(
            model, device_ids=[device.index] if getattr(device, "type", "cpu") == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    torch.manual_seed(10 + rank)  # each rank its own batch
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    return model, opt, x.to(device), y.to(device)


def step_function(model, opt, ddp=False):
    def train_step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if not ddp:  # data parallel by hand: the ranks' mean gradient
            for p in model.parameters():
                dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        opt.step()
        return loss
    return train_step


def main():
    args = [a for a in sys.argv[1:] if a != "--ddp"]
    ddp = "--ddp" in sys.argv
    out = args[0] if args else "."
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model, opt, x, y = make(rank, torch.device("cpu"), ddp)
    step = torch.compile(step_function(model, opt, ddp))
    for i in range(STEPS):
        loss = step(x, y)
        print(f"rank {rank} step {i + 1} loss {loss.item():.6g}", flush=True)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, f"x{rank}.npy"), x.numpy())
    np.save(os.path.join(out, f"y{rank}.npy"), y.numpy())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
