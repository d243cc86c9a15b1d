# An optional argument: `is None` is guarded; passing a tensor recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['mask'] is None
import torch

@torch.compile
def f(x, mask=None):
    if mask is not None:
        x = x * mask
    return x + 1

print(f(torch.ones(2)).tolist())
print(f(torch.ones(2), torch.tensor([0.0, 1.0])).tolist())
