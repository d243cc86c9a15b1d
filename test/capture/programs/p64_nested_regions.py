# A compiled function called from another compiled function.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def inner(x):
    return x * 2

@torch.compile
def outer(x):
    return inner(x) + 1

print(outer(torch.ones(2)).tolist())
