# A tuple of tensors and a Python constant as the result.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    return x + 1, x - 1, "tag"

a, b, tag = f(torch.zeros(2))
print(a.tolist(), b.tolist(), tag)
