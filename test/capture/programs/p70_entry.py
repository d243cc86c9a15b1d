# --entry narrows the region to one function: each call of step() is a region
# call (a new batch size recompiles, and makes the batch dim dynamic), the rest
# of the script runs plainly.
# capture-args: --entry p70_entry:step
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3], stride=[3, 1])
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect ops: aten.tanh
# dynamo: skip
import torch

def step(x, w):
    return torch.tanh(x @ w)

w = torch.ones(3, 3)
print(step(torch.ones(2, 3), w).shape)
print(step(torch.ones(2, 3), w).shape)
print(step(torch.ones(5, 3), w).shape)
