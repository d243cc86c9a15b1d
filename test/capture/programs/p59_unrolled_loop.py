# A Python loop over range() is unrolled into the graph.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    for _ in range(4):
        x = torch.sin(x) + x
    return x

print([round(v, 4) for v in f(torch.tensor([0.5, 1.0])).tolist()])
