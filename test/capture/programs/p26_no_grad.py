# with torch.no_grad() inside the region.
# expect graphs: 1
# expect breaks: 0
import torch

torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(3))

@torch.compile
def f(x):
    with torch.no_grad():
        y = x * w
    return y + 1

out = f(torch.ones(3))
print(out.requires_grad, torch.allclose(out, torch.ones(3) * w.detach() + 1))
