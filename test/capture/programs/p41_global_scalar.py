# A global scalar scaling a graph value is guarded as G['SCALE'].
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: G['SCALE'] == 2.0
import torch

SCALE = 2.0

@torch.compile
def f(x):
    return x * SCALE

print(f(torch.ones(2)).tolist())
SCALE = 3.0
print(f(torch.ones(2)).tolist())
