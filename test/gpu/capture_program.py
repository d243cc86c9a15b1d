"""A program captured on the GPU machine, under its own Python (3.12 there):
a transformer block on CUDA tensors through torch.compile, as a user writes
it. tools/gpu_capture.sh captures it there (`capture`), the build machine
builds the graph for CUDA, and `run` checks the built model there against
what this program computed (saved next to the capture, DYNOC_REF)."""
import os
import sys

import torch

torch.manual_seed(0)


class Block(torch.nn.Module):
    def __init__(self, d=128, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm1 = torch.nn.LayerNorm(d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(d, 4 * d), torch.nn.GELU(),
                                       torch.nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


model = Block().cuda().eval()
x = torch.randn(8, 64, 128, device="cuda")
compiled = torch.compile(model)
with torch.no_grad():
    y = compiled(x)
torch.save({"x": x.cpu(), "y": y.cpu()}, os.environ["DYNOC_REF"])
print(f"captured on CPython {sys.version.split()[0]}, torch {torch.__version__}, "
      f"{torch.cuda.get_device_name()}")
