# A size the Python code spells as another tensor's dims (b, n = x.shape;
# s.expand(b, n)) expands a size-1 dim, which a size attribute cannot say
# with -1: when both dims turn dynamic the op becomes aten.expand_as(s, x),
# so one dynamic graph covers every later size.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect ops: aten.expand_as
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, None], stride=[None, 1])
# dynamo: breaks<=
import torch

scale = torch.tensor([[2.0]])


@torch.compile
def f(x):
    b, n = x.shape
    return x * scale.expand(b, n) + 1


for b, n in ((2, 4), (3, 6), (5, 5)):
    print(f(torch.linspace(0, 1, b * n).reshape(b, n)).sum().item())
