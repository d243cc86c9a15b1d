# A decision on the size of a tensor the region computed: while the variant is
# static its tensor guards imply it; when the batch dim turns dynamic, a replay
# with symbolic sizes expresses it in the input's sizes (2 * b > 4), the
# symbolic guard the runtime checks. Batch 1 fails it and recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 2
# expect guard: L['x'].size()[0] * 2 > 4
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 2], stride=[2, 1])
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    y = torch.cat([x, x])
    if y.size(0) > 4:
        return y * 2
    return y + 1

for n in (3, 4, 1):
    print(f(torch.ones(n, 2)).sum().item())
