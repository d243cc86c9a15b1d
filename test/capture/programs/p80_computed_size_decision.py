# A decision on the size of a tensor the region computed: its relation to the
# input sizes is not tracked, so the region stays static per size (a merged
# dynamic graph would lack the guard). DYNOC_LOGS=recompiles says why.
# expect graphs: 3
# expect breaks: 0
# expect recompiles: 2
# expect stderr: stays static: a decision on a size whose origin is not tracked (<untracked>.size()[0] > 4)
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
