# torch._dynamo.graph_break() splits the region.
# expect graphs: 2
# expect breaks: 1
# expect break: graph_break() called
import torch
import torch._dynamo

@torch.compile
def f(x):
    y = x + 1
    torch._dynamo.graph_break()
    return y * 2

print(f(torch.ones(2)).tolist())
