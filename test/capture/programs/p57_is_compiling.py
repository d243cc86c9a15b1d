# torch.compiler.is_compiling() is True while the region is captured.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor
import torch

@torch.compile
def f(x):
    if torch.compiler.is_compiling():
        return x * 2
    return x * 3

print(f(torch.ones(1)).tolist())
