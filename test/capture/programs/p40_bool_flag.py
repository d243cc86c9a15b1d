# A bool flag steering control flow is guarded.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['relu'] == True
import torch

@torch.compile
def f(x, relu):
    if relu:
        return torch.relu(x)
    return torch.neg(x)

print(f(torch.tensor([-1.0, 2.0]), True).tolist())
print(f(torch.tensor([-1.0, 2.0]), False).tolist())
