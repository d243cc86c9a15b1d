# A closure over a Python float: its value is guarded by where it came from.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['alpha'] == 0.25
import torch

def make(alpha):
    def f(x):
        return x * alpha + x
    return f

f = torch.compile(make(0.25))
print(f(torch.ones(2)).tolist())
