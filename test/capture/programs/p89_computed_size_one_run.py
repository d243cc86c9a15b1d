# dynamic=True with decisions on computed sizes: a flattened tensor's element
# count and a matmul's rows are expressed in the input's sizes by a replay
# with symbolic sizes, so one run gives a dynamic variant with those symbolic
# guards; a size from a computed tensor passed to a view (h.size(0)) is
# recomputed at other sizes.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 0
# expect guard: L['x'].size()[0] * 3 > 10
# expect guard: L['x'].size()[0] >= 2
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3], stride=[3, 1])
# expect stderr: are dynamic from this run
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch

w = torch.linspace(-1, 1, 12).reshape(3, 4)


@torch.compile(dynamic=True)
def f(x):
    flat = x.reshape(-1)
    h = x @ w
    rows = h.size(0)
    out = h.view(rows, 2, 2).sum(-1)
    if flat.numel() > 10:
        out = out * 2
    if h.shape[0] >= 2:
        out = out + 1
    return out


for b in (4, 6, 5):
    x = torch.linspace(0, 1, b * 3).reshape(b, 3)
    print([[round(v, 4) for v in row] for row in f(x).tolist()])
