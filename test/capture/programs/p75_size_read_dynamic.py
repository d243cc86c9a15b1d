# Python reads the sizes (x.shape -> a view size). A recompile for a new batch
# merges: the view's batch dim becomes -1, and the size that went through `//`
# (not affine) is pinned by a size guard.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 4], stride=[4, 1])
# expect guard: L['x'].size()[1] == 4
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    b, n = x.shape
    return x.view(b, 2, n // 2).sum(-1)

for b in (2, 3, 5):
    print(f(torch.ones(b, 4)).shape)
