# Tensor.item() makes a Python number: a break; tolist() too.
# expect graphs: 2
# expect breaks: 1
# expect break: item()
import torch

@torch.compile
def f(x):
    s = (x * 2).sum().item()
    return x + s

print(f(torch.arange(4.0)).tolist())
