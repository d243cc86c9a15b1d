# Grad mode is global state in the guards; switching it recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: ___is_grad_enabled() == True
import torch

@torch.compile
def f(x):
    return x.exp()

f(torch.zeros(2))
with torch.no_grad():
    print(f(torch.zeros(2)).tolist())
