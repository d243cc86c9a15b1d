# A tensor's value in an if: a break; both sides are graphs.
# expect graphs: 2
# expect breaks: 1
# expect break: a tensor's value decides Python control flow
# dynamo: graphs  (its graph_break counter does not count this jump)
import torch

@torch.compile
def f(x):
    s = x.sum()
    if s > 0:
        return x * 2
    return x * -2

print(f(torch.ones(3)).tolist())
