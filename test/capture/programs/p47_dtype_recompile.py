# A new dtype recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
import torch

@torch.compile
def f(x):
    return x * 2

print(f(torch.ones(2)).dtype, f(torch.ones(2, dtype=torch.float64)).dtype)
