# A disable()d function runs outside the graphs: one break.
# expect graphs: 2
# expect breaks: 1
# dynamo: graphs
# expect break: disable()
import torch
import torch._dynamo

@torch._dynamo.disable
def eager_only(x):
    return x.flip(0)

@torch.compile
def f(x):
    return eager_only(x * 2) + 1

print(f(torch.arange(3.0)).tolist())
