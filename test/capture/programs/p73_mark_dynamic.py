# mark_dynamic on the sequence dim: the first call makes it dynamic (a replay of
# the graph at another length is the shape oracle), so the second length reuses it.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 0
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[2, None, 4], stride=[None, 4, 1])
# dynamo: same
import torch
import torch._dynamo

@torch.compile
def f(x):
    return torch.softmax(x * 2, dim=-1).sum(1)

for n in (3, 6):
    x = torch.ones(2, n, 4)
    torch._dynamo.mark_dynamic(x, 1)
    print(f(x).shape)
