# len(x) is the size of dim 0 (a size guard once dynamic); a decision on
# numel() is expressed in the input's sizes when the batch dim turns dynamic
# (2 * b > 3), so both regions end with one dynamic variant.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 2
# expect guard: L['x'].size()[0] >= 2
# expect guard: L['x'].size()[0] * 2 > 3
# dynamo: breaks<=
import torch

@torch.compile
def by_len(x):
    if len(x) >= 2:
        return x * 2
    return x

@torch.compile
def by_numel(x):
    if x.numel() > 3:
        return x - 1
    return x

for n in (2, 3):
    print(by_len(torch.ones(n, 2)).sum().item(), by_numel(torch.ones(n, 2)).sum().item())
