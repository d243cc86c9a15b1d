# disable(recursive=False): the function's own frame runs eagerly (its x * 3 is
# in no graph) and is a break in the region; the function it calls (helper) is
# a region of its own, with its own graph and guards, as Dynamo compiles that
# frame. The region resumes after the call with a new graph.
# expect graphs: 3
# expect breaks: 1
# expect break: disabled by disable()
# expect ops: aten.sin aten.cos
# dynamo: graphs
import torch


def helper(y, k):
    return y.sin() + k


@torch._dynamo.disable(recursive=False)
def eager_part(x):
    y = x * 3
    return helper(y, 1)


@torch.compile
def f(x):
    a = x.cos()
    b = eager_part(a)
    return b * 2


for n in (3, 3):
    print([round(v, 4) for v in f(torch.linspace(0, 1, n)).tolist()])
