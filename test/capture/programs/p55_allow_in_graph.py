# allow_in_graph: the function is not followed but its ops are in the graph.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor aten.add.Tensor
import torch
import torch._dynamo

def fused(x, y):
    return x * y + y

torch._dynamo.allow_in_graph(fused)

@torch.compile
def f(x):
    return fused(x, x + 1)

print(f(torch.ones(2)).tolist())
