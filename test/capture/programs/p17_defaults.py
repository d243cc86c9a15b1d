# Defaults and keyword-only arguments of the region itself.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['p'] == 2
import torch

@torch.compile
def f(x, p=2, *, eps=1e-6):
    return x.pow(p) + eps

print(f(torch.tensor([3.0])).tolist())
