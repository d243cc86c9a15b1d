# cat, stack, split and chunk.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.cat aten.split.Tensor
import torch

@torch.compile
def f(x):
    a, b = x.chunk(2)
    parts = torch.cat([b, a]).split(2)
    return torch.stack([p.sum() for p in parts])

print(f(torch.arange(8.0)).tolist())
