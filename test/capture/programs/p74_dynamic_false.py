# dynamic=False: every new size is a new static graph.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
import torch

@torch.compile(dynamic=False)
def f(x):
    return x.relu() + 1

for b in (2, 3):
    print(f(torch.ones(b, 2)).shape)
