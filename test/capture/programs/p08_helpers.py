# Calls to user helper functions are followed (inlined): one graph.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor aten.sub.Tensor aten.sigmoid
import torch

def scale(x, k):
    return x * k

def shift(x):
    return x - 0.5

@torch.compile
def f(x):
    return torch.sigmoid(shift(scale(x, 2.0)))

print(f(torch.ones(2)).tolist())
