# The region called with keyword arguments.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['alpha'] == 0.5
import torch

@torch.compile
def f(x, *, y, alpha):
    return x + alpha * y

print(f(torch.ones(2), y=torch.ones(2), alpha=0.5).tolist())
