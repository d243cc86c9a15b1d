# sum() over a generator expression (the generator runs natively, its ops
# are recorded).
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(xs):
    return sum(x * x for x in xs)

print(f([torch.ones(2), 2 * torch.ones(2)]).tolist())
