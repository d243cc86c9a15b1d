# A plain function region: pointwise ops and a reduction-free chain.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.sin aten.mul.Tensor aten.add.Tensor
import torch

def f(x, y):
    return torch.sin(x) * y + 1.0

cf = torch.compile(f)
x, y = torch.randn(4, 8), torch.randn(4, 8)
print(torch.allclose(cf(x, y), f(x, y)))
