# Past config.cache_size_limit, calls run eagerly (with a warning).
# expect graphs: 2
# expect recompiles: 1
# dynamo: skip
import warnings
import torch
import torch._dynamo

torch._dynamo.config.cache_size_limit = 2

@torch.compile
def f(x, n):
    return x + n

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    print([f(torch.zeros(1), n).item() for n in range(4)])
