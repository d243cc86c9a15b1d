# Lambdas made and called inside the region.
# expect graphs: 1
# expect breaks: 0
import torch

@torch.compile
def f(x):
    act = lambda t: torch.relu(t) * 2
    return act(x) + act(-x)

print(f(torch.tensor([1.0, -2.0])).tolist())
