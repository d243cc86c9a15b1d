# A nested function writing a nonlocal (cells: MAKE_CELL, STORE_DEREF).
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    acc = x
    def add(t):
        nonlocal acc
        acc = acc + t
    add(x)
    add(x * 2)
    return acc

print(f(torch.ones(2)).tolist())
