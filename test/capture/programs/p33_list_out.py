# A list result built in a loop.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x, n):
    out = []
    for i in range(n):
        out.append(x + i)
    return out

print([t.tolist() for t in f(torch.zeros(1), 3)])
