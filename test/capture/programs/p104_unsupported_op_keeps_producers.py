# A graph that ends at an op outside the dialect keeps the ops that made that
# op's inputs: they become outputs of the closed graph (before the fix, the
# matmul and relu were dropped as unused), and the op's result enters the next
# graph as an input named after it.
# expect graphs: 2
# expect breaks: 1
# expect ops: aten.mm aten.relu aten.mul.Tensor
# expect break: is not an op of the aten dialect
# expect input: user result of aten.i0
# dynamo: stdout
import torch

torch.manual_seed(0)
x, w = torch.randn(4, 8), torch.randn(8, 3)


@torch.compile
def f(x, w):
    h = (x @ w).relu()
    return torch.special.i0(h) * 2


print(round(f(x, w).sum().item(), 3))
