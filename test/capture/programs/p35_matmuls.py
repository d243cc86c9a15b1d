# matmul, bmm and F.linear.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.bmm
import torch
import torch.nn.functional as F

@torch.compile
def f(a, b, w):
    return F.linear(torch.bmm(a, b), w)

torch.manual_seed(0)
a, b, w = torch.randn(2, 3, 4), torch.randn(2, 4, 5), torch.randn(6, 5)
print(torch.allclose(f(a, b, w), F.linear(torch.bmm(a, b), w)))
