# Tensor.tolist() hands data to Python: a break.
# expect graphs: 2
# expect breaks: 1
# expect break: tolist()
import torch

@torch.compile
def f(x):
    vals = (x + 1).tolist()
    return x * len(vals)

print(f(torch.ones(3)).tolist())
