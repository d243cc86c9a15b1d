# softmax and layer_norm from torch.nn.functional.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten._softmax aten.native_layer_norm
import torch
import torch.nn.functional as F

@torch.compile
def f(x):
    return F.softmax(F.layer_norm(x, (x.shape[-1],)), dim=-1)

torch.manual_seed(0)
x = torch.randn(2, 5)
print(torch.allclose(f(x), F.softmax(F.layer_norm(x, (5,)), dim=-1)))
