# Python reads the size (x.shape -> a view size): a value guard that differs
# between sizes, so the region stays static, one variant per size.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['x'].shape[0] == 2
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    b, n = x.shape
    return x.view(b, 2, n // 2).sum(-1)

for b in (2, 3):
    print(f(torch.ones(b, 4)).shape)
