# dynamic=True on a region that a graph break splits: the second graph takes
# the first graph's output, so a replay of the graphs in order, at other sizes,
# makes both dynamic from one run; batches 6 and 5 reuse them.
# expect graphs: 2
# expect breaks: 1
# expect recompiles: 0
# expect break: graph_break
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3], stride=[3, 1])
# expect stderr: are dynamic from this run
# env: DYNOC_LOGS=recompiles
# dynamo: same
import torch


@torch.compile(dynamic=True)
def f(x):
    y = torch.cat([x, x]).relu() * 2
    torch._dynamo.graph_break()
    b = y.shape[0]
    return y.view(b, 3, 1).sum(0) + x.mean(0, keepdim=True).t()


for b in (4, 6, 5):
    x = torch.linspace(-1, 1, b * 3).reshape(b, 3)
    print([[round(v, 4) for v in row] for row in f(x).tolist()])
