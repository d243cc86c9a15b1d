# Batch and sequence both change: the views that F.linear's decomposition
# makes ([b * t, 8] in, [b, t, 6] out) hold two dynamic dims, which one -1
# cannot say. The merge writes each such entry as an expression of the input
# dims that explains both runs (dynoc.sym_sizes = {size = affine_map<()[s0,
# s1] -> (s0, s1, 6)>}), checked by a symbolic replay of the whole graph
# against both runs' shapes; one dynamic graph covers the third call.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, None, 8], stride=[None, 8, 1])
# env: DYNOC_LOGS=recompiles
# expect stderr: dims {"L['x']": [0, 1]} are dynamic now
# dynamo: breaks<=
import torch

torch.manual_seed(0)
lin = torch.nn.Linear(8, 6)


@torch.compile
def f(x):
    b, t, _ = x.shape
    h = lin(x).relu()
    return h.view(b, t, 3, 2).sum(-1)


with torch.no_grad():
    for b, t in ((2, 3), (3, 5), (4, 4)):
        x = torch.linspace(-1, 1, b * t * 8).reshape(b, t, 8)
        print([round(v, 4) for v in f(x).sum((0, 1)).tolist()])
