# A dict comprehension; a dict result.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    parts = {name: fn(x) for name, fn in [("sin", torch.sin), ("cos", torch.cos)]}
    return {k: v + 1 for k, v in parts.items()}

out = f(torch.zeros(2))
print(sorted(out), out["sin"].tolist(), out["cos"].tolist())
