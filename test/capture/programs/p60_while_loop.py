# A while loop on a Python counter.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    i = 0
    while i < 3:
        x = x * 2
        i += 1
    return x

print(f(torch.ones(1)).tolist())
