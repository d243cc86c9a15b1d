# mark_dynamic where Python passes the size on (x.view(b, -1)): the replay
# recomputes b from its source, the view's size becomes (-1, 12), and batches
# 5 and 2 reuse the graph.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 0
# expect guard: check_tensor(L['x'], torch.float32, device='cpu', requires_grad=False, size=[None, 3, 4], stride=[12, 4, 1])
# expect stderr: are dynamic from this run
# env: DYNOC_LOGS=recompiles
# dynamo: same
import torch


@torch.compile
def f(x):
    b = x.shape[0]
    return x.view(b, -1).softmax(-1).sum(1)


for b in (3, 5, 2):
    x = torch.linspace(0, 1, b * 12).reshape(b, 3, 4)
    torch._dynamo.mark_dynamic(x, 0)
    print([round(v, 5) for v in f(x).tolist()])
