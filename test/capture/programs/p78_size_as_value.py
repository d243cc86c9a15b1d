# A size that Python uses as a plain value (a loop count) unrolls into the
# graph: each batch size is its own static variant, never a dynamic one.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['x'].size()[0] == 2
# expect guard: L['x'].size()[0] == 3
# dynamo: breaks<=
import torch

@torch.compile
def f(x):
    acc = x[0]
    for i in range(1, x.size(0)):
        acc = acc + x[i]
    return acc

for n in (2, 3):
    print(f(torch.arange(n * 2.0).reshape(n, 2)).tolist())
