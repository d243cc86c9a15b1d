# torch.compiler.is_compiling() is True on every call of a compiled function,
# not only the first: the cached calls stand for compiled code, in which Dynamo
# has the branch folded.
# expect graphs: 1
# expect breaks: 0
import torch
import torch.compiler


@torch.compile
def f(x):
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1


for _ in range(3):
    print(f(torch.zeros(2)).tolist())
print(torch.compiler.is_compiling())
