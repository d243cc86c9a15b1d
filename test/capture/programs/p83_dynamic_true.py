# torch.compile(dynamic=True): every dim of size 2 or more is dynamic from the
# first call, so other batch and feature sizes reuse the one graph.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 0
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, None], stride=[None, 1])
# dynamo: same
import torch


def f(x, w):
    return torch.relu(x * w + 1).sum(-1)


g = torch.compile(f, dynamic=True)
for b, n in ((3, 5), (7, 5), (2, 9)):
    x = torch.arange(b * n, dtype=torch.float32).reshape(b, n)
    print(g(x, torch.full((n,), 0.5)).tolist())
