# print() inside a region is a side effect outside the graph: a break.
# expect graphs: 2
# expect breaks: 1
# expect break: print
import torch

@torch.compile
def f(x):
    y = x.relu()
    print("between")
    return y + 1

print(f(torch.ones(3)).sum().item())
