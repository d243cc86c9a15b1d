# expand to sizes Python read: a dim that keeps the input's own size becomes
# -1 in the merged graph (dynamic); a broadcast of a size-1 dim to the batch,
# which -1 cannot say, is written as the input dim that explains both runs
# (dynoc.sym_sizes = {size = affine_map<()[s0] -> (s0, 4)>}).
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 2
# expect ops: aten.expand
# dynamo: breaks<=
import torch

@torch.compile
def keep(x):
    b, n = x.shape
    return x.unsqueeze(1).expand(b, 3, n).sum(1)

bias = torch.ones(1, 4)

@torch.compile
def broadcast(x):
    return x + bias.expand(x.size(0), 4)

for n in (2, 3):
    print(keep(torch.ones(n, 4)).tolist(), broadcast(torch.ones(n, 4)).tolist())
