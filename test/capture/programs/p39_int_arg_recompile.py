# A Python int argument is specialized: a new value recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['n'] == 2
import torch

@torch.compile
def f(x, n):
    return x * n

print(f(torch.ones(2), 2).tolist())
print(f(torch.ones(2), 2).tolist())
print(f(torch.ones(2), 5).tolist())
