# torch.compiler.disable on a helper.
# expect graphs: 2
# expect breaks: 1
# dynamo: graphs
import torch

@torch.compiler.disable
def helper(x):
    return x.sum(0, keepdim=True)

@torch.compile
def f(x):
    return helper(x + 1) * 2

print(f(torch.ones(2, 2)).tolist())
