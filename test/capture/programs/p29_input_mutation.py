# Mutating an input in place: the caller sees the mutation; the graph records
# it functionally and lists the input under "mutations" (written back).
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor
# expect mutation: L['x']
import torch

@torch.compile
def f(x):
    x.mul_(3)
    return x + 1

x = torch.ones(2)
y = f(x)
print(x.tolist(), y.tolist())
