# A global tensor the region did not make is a named constant.
# expect graphs: 1
# expect breaks: 0
# expect input: constant G['TABLE']
import torch

TABLE = torch.arange(6.0).reshape(2, 3)

@torch.compile
def f(x):
    return x @ TABLE

print(f(torch.ones(1, 2)).tolist())
