# Affine arithmetic on sizes stays symbolic: the guard reads
# `(L['x'].size()[0] * 2) >= 6` and the reshape takes the dynamic dim as -1;
# the size that went through `//` is pinned.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect guard: (L['x'].size()[0] * 2) >= 6
# expect guard: L['x'].size()[1] == 4
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    rows, cols = x.shape[0] * 2, x.shape[-1]
    if rows >= 6:
        x = x.relu()
    return x.reshape(rows, cols // 2)

for n in (3, 5, 9):
    print(f(torch.randn(n, 4).abs()).shape)
