# torch._dynamo.export(fn)(*args) inside a captured script: one graph as a
# GraphModule plus its guards, as Dynamo's export returns them; it runs in a
# session of its own, so the script's graphs are only its torch.compile
# region's (Dynamo's counting backend does not see export's graph either).
# torch._dynamo.reset() forgets compiled code, not the graphs captured so far.
# expect graphs: 2
# expect breaks: 0
# expect ops: aten.relu aten.tanh
import torch
import torch._dynamo


def f(x):
    return torch.relu(x) * 2


gm, guards = torch._dynamo.export(f)(torch.randn(3))
x = torch.tensor([-1.0, 0.5, 2.0])
print(type(gm).__name__, len(guards) > 0, gm(x)[0].tolist())
print(torch.compile(f)(x).tolist())
torch._dynamo.reset()
print(torch.compile(lambda y: torch.tanh(y) + 1)(x).round(decimals=4).tolist())
