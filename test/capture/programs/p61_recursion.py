# A recursive user function with a Python depth.
# expect graphs: 1
# expect breaks: 0
import torch

def tower(x, depth):
    if depth == 0:
        return x
    return tower(torch.tanh(x) + 1, depth - 1)

@torch.compile
def f(x):
    return tower(x, 3)

print([round(v, 4) for v in f(torch.zeros(2)).tolist()])
