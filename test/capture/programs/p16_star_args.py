# *args/**kwargs forwarded through a wrapper.
# expect graphs: 1
# expect breaks: 0
import torch

def inner(a, b, scale=1.0, *, bias=0.0):
    return (a + b) * scale + bias

def outer(*args, **kwargs):
    return inner(*args, **kwargs)

@torch.compile
def f(x, y):
    return outer(x, y, 2.0, bias=1.0)

print(f(torch.ones(2), torch.ones(2)).tolist())
