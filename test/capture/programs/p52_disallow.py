# disallow_in_graph on a torch op: a call to it is a break and runs eagerly.
# expect graphs: 2
# expect breaks: 1
# expect break: disallow_in_graph
# dynamo: graphs
import torch
import torch._dynamo

torch._dynamo.disallow_in_graph(torch.flip)

@torch.compile
def f(x):
    return torch.flip(x + 1, [0]) * 10

print(f(torch.arange(3.0)).tolist())
