# fullgraph=True turns a break into torch._dynamo.exc.Unsupported naming reason
# and place, raised before the breaking instruction runs: the print() that
# breaks prints nothing, as under Dynamo (which raises before running anything).
# expect graphs: 0
# dynamo: breaks<=
import torch
import torch._dynamo


@torch.compile(fullgraph=True)
def f(x):
    if x.sum() > 0:
        return x
    return -x


@torch.compile(fullgraph=True)
def g(x):
    y = x + 1
    print("inside g")
    return y * 2


for fn in (f, g):
    try:
        fn(torch.ones(2))
        print("no error")
    except torch._dynamo.exc.Unsupported as e:
        print("Unsupported", type(e).__name__)
