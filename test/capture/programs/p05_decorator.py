# @torch.compile on a function definition.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.cos aten.add.Tensor
import torch

@torch.compile
def f(a, b):
    return torch.cos(a) + b

print(f(torch.zeros(3), torch.ones(3)).tolist())
