# mark_static and mark_dynamic as Dynamo keeps them: a dim marked static is
# never taken by a dynamic variant nor merged into one; mark_dynamic on a dim
# the code branches on raises ConstraintViolationError; mark_dynamic inside a
# compiled function is forbidden (AssertionError). Dynamo keeps the static
# graph beside the dynamic one where dynoc merges them, so counts differ by
# that one graph (docs/capture.md, "Dynamic shapes").
# expect graphs: 3
# expect recompiles: 2
# expect breaks: 0
# dynamo: breaks<=
import torch
import torch._dynamo
from torch.fx.experimental.symbolic_shapes import ConstraintViolationError


@torch.compile
def f(x):
    return x * 2


a = torch.ones(3, 4)
torch._dynamo.mark_static(a, 0)
print(f(a).sum().item())
print(f(torch.ones(5, 4)).sum().item(), f(torch.ones(6, 4)).sum().item())
b = torch.ones(7, 4)
torch._dynamo.mark_static(b, 0)
print(f(b).sum().item())


@torch.compile
def g(x):
    if x.shape[0] == 3:
        return x + 1
    return x


c = torch.zeros(3, 2)
torch._dynamo.mark_dynamic(c, 0)
try:
    g(c)
except ConstraintViolationError as e:
    print("ConstraintViolationError", "L['x'].size()[0]" in str(e))


@torch.compile
def h(x):
    torch._dynamo.mark_dynamic(x, 0)
    return x + 1


try:
    h(torch.zeros(2))
except AssertionError as e:
    print("AssertionError", "forbidden callable" in str(e))
