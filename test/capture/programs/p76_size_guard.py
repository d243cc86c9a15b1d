# A decision on a size: once the batch dim is dynamic, the branch taken is a
# symbolic guard; a batch on the other side of it recompiles, dynamic at once
# (the earlier variant's dynamic dims are asked for, as Dynamo does).
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 2
# expect guard: L['x'].size()[0] > 4
# expect guard: L['x'].size()[0] <= 4
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3, 4], stride=[12, 4, 1])
# expect stderr: are dynamic from this run
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    b = x.size(0)
    if b > 4:
        y = x * 2
    else:
        y = x + 1
    return y.view(b, -1).sum(1)

for n in (6, 8, 10, 2, 3):
    print(f(torch.ones(n, 3, 4)).tolist()[:2])
