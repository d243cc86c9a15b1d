# Starred unpacking of a tuple of tensors.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    first, *rest = x.unbind(0)
    return first + sum(rest)

print(f(torch.arange(6.0).reshape(3, 2)).tolist())
