# A list comprehension over tensors.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.stack
import torch

@torch.compile
def f(xs):
    ys = [x * i for i, x in enumerate(xs)]
    return torch.stack(ys)

print(f([torch.ones(2), torch.ones(2), torch.ones(2)]).tolist())
