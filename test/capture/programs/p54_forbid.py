# forbid_in_graph: calling it inside a region is an error naming it, an
# AssertionError as Dynamo raises.
# expect graphs: 0
# expect exit: 0
# dynamo: breaks<=
import torch
import torch._dynamo

def secret(x):
    return x + 1

torch._dynamo.forbid_in_graph(secret)

@torch.compile
def f(x):
    return secret(x)

try:
    f(torch.ones(1))
    print("no error")
except AssertionError as e:
    print("error:", "secret" in str(e))
