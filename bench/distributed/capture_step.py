"""The program bench/distributed/run.py's `prepare` captures on each gloo
rank (`dynoc capture`, WORLD_SIZE ranks): model MODEL as a
DistributedDataParallel module, one compiled training step (bf16 autocast
forward, backward, SGD with momentum) run 3 times on the rank's batch.

    python3 capture_step.py MODEL
"""
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

name = sys.argv[1]
dist.init_process_group("gloo")
model = DistributedDataParallel(models.make(name))
opt = models.optimizer(model.parameters())
x, y = models.batch(name, dist.get_rank())


def train_step(x, y):
    opt.zero_grad()
    loss = models.loss_of(model, x, y, "cpu")
    loss.backward()
    opt.step()
    return loss


step = torch.compile(train_step)
for i in range(3):
    print(f"rank {dist.get_rank()} step {i + 1} loss {step(x, y).item():.6g}", flush=True)
dist.barrier()
dist.destroy_process_group()
