# fullgraph=True turns a break into an error naming reason and place.
# expect graphs: 0
# dynamo: breaks<=
import torch

@torch.compile(fullgraph=True)
def f(x):
    if x.sum() > 0:
        return x
    return -x

try:
    f(torch.ones(2))
    print("no error")
except Exception:
    print("error")
