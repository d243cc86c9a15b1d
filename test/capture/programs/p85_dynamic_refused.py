# A size used as a plain value (range(n)) pins its dim with an equality guard,
# so dynamic=True cannot make that dim dynamic from one run; the other dims are.
# A new length recompiles.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['x'].size()[1] == 3
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3], stride=[3, 1])
# dynamo: breaks<=
import torch


@torch.compile(dynamic=True)
def f(x):
    out = x[:, 0] * 0
    for i in range(x.shape[1]):
        out = out + x[:, i] * (i + 1)
    return out


for b, n in ((4, 3), (6, 3), (4, 5)):
    print(f(torch.ones(b, n)).tolist())
