# torch._dynamo.optimize as a decorator.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.tanh
import torch
import torch._dynamo

@torch._dynamo.optimize("eager")
def f(x):
    return torch.tanh(x) * 3

print(f(torch.zeros(2)).tolist())
