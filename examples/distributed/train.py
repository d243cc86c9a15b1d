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
Without dynoc (`python3 train.py DIR`) it trains eagerly. Writes each rank's
batch to DIR/x<rank>.npy, DIR/y<rank>.npy.
"""
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch import nn

STEPS = 3  # the steps the capture runs (the .so continues from there)


def make(rank, device):
    """The model, its optimizer and this rank's batch (seeded: the same on
    every run)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    torch.manual_seed(10 + rank)  # each rank its own batch
    x, y = torch.randn(8, 16), torch.randn(8, 4)
    return model, opt, x.to(device), y.to(device)


def step_function(model, opt):
    def train_step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        for p in model.parameters():  # data parallel: the ranks' mean gradient
            dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
        opt.step()
        return loss
    return train_step


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model, opt, x, y = make(rank, "cpu")
    step = torch.compile(step_function(model, opt))
    for i in range(STEPS):
        loss = step(x, y)
        print(f"rank {rank} step {i + 1} loss {loss.item():.6g}", flush=True)
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, f"x{rank}.npy"), x.numpy())
    np.save(os.path.join(out, f"y{rank}.npy"), y.numpy())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
