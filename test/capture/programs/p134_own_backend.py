# A script's own backends under capture: a callable passed as backend= and a
# name the script registered are handed the recording as a torch.fx
# GraphModule (as Dynamo hands its graph), and what they return runs the later
# calls, so their prints and counters behave as in the plain run. (The first
# call runs as recorded: a count of the returned callable's runs is one less
# than Dynamo's, so it is not printed; docs/capture.md.)
# expect graphs: 2
# expect breaks: 0
# stdout: plain
import torch
from torch._dynamo import register_backend

seen = []


def counting_backend(gm, example_inputs):
    seen.append(type(gm).__name__)
    print("counting_backend got a", type(gm).__name__, "with",
          len(example_inputs), "inputs")

    def run(*args):
        seen.append("run")
        return gm(*args)
    return run


@register_backend
def p134_registered(gm, example_inputs):
    print("p134_registered got a", type(gm).__name__)
    return gm.forward


@torch.compile(backend=counting_backend)
def f(x):
    return torch.sin(x) + 1


@torch.compile(backend="p134_registered")
def g(x, y):
    return (x * y).relu()


x = torch.linspace(-1, 1, 5)
for _ in range(3):
    print(f(x))
print(g(x, x + 0.5))
print(g(x, x - 0.5))
print("backend compiles", seen.count("GraphModule"), "compiled runs", seen.count("run") >= 2)
