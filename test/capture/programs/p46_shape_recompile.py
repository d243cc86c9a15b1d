# A new input shape fails the tensor guard and recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[2, 3], stride=[3, 1])
import torch

@torch.compile(dynamic=False)
def f(x):
    return x.softmax(-1)

f(torch.ones(2, 3))
f(torch.ones(2, 3))
print(f(torch.ones(4, 3)).shape)
