# Slicing a tensor with a bound that is a size (table[:, :n], n = x.shape[1],
# as BERT slices its position ids) passes the bound to the ATen slice instead
# of pinning it: when the dims turn dynamic the slice's end is written as the
# input dim (dynoc.sym_sizes = {end = ...}) and one graph serves every length.
# Slicing a Python list with a size still pins it (a guard per length).
# expect graphs: 4
# expect breaks: 0
# expect recompiles: 3
# expect ops: aten.slice.Tensor
# expect guard: L['x'].size()[1] == 4
# dynamo: breaks<=
import torch

table = torch.arange(64.0).reshape(1, 64)
weights = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@torch.compile
def by_tensor(x):
    n = x.shape[1]
    return x + table[:, :n]


@torch.compile
def by_list(x):
    n = x.shape[1]
    return x * sum(weights[:n])


for b, n in ((2, 4), (3, 6), (4, 5)):
    x = torch.ones(b, n)
    print(by_tensor(x).sum().item(), by_list(x).sum().item())
