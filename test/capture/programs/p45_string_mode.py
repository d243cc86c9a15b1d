# A string argument choosing the path.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['mode'] == 'max'
import torch

@torch.compile
def f(x, mode):
    if mode == "max":
        return x.amax(-1)
    return x.mean(-1)

print(f(torch.arange(6.0).reshape(2, 3), "max").tolist())
