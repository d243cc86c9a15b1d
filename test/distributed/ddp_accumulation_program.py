"""A DistributedDataParallel step that accumulates the gradients of two
micro-batches, the first under no_sync(): under `dynoc capture` (the
recording step, its collectives run for real) against eager DDP in the same
process; prints each rank's largest parameter difference after 3 steps
(test/distributed/test_collectives.py)."""
import torch, torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
rank = dist.get_rank()
def make():
    torch.manual_seed(0)
    m = DDP(nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2)))
    return m, torch.optim.SGD(m.parameters(), lr=0.1)
torch.manual_seed(10 + rank)
xs, ys = torch.randn(2, 4, 6), torch.randn(2, 4, 2)
def step_of(model, opt):
    def step(xs, ys):
        opt.zero_grad()
        with model.no_sync():
            nn.functional.mse_loss(model(xs[0]), ys[0]).backward()
        loss = nn.functional.mse_loss(model(xs[1]), ys[1])
        loss.backward()
        opt.step()
        return loss
    return step
m1, o1 = make(); m2, o2 = make()
compiled, eager = torch.compile(step_of(m1, o1)), step_of(m2, o2)
for _ in range(3):
    compiled(xs, ys); eager(xs, ys)
d = max((a - b).abs().max().item() for a, b in zip(m1.parameters(), m2.parameters()))
print(f"rank {rank} max param diff vs eager DDP: {d:.3g}", flush=True)
