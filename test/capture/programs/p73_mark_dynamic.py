# mark_dynamic on the sequence dim; the second length makes it dynamic.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[2, None, 4], stride=[None, 4, 1])
# dynamo: breaks<=
import torch
import torch._dynamo

@torch.compile
def f(x):
    return torch.softmax(x * 2, dim=-1).sum(1)

for n in (3, 6):
    x = torch.ones(2, n, 4)
    torch._dynamo.mark_dynamic(x, 1)
    print(f(x).shape)
