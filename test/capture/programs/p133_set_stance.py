# torch.compiler.set_stance: each stance as a call, a context manager and a
# decorator, read when a compiled function is entered; set_stance inside a
# region, and a force_eager function called from one, are forbidden callables.
# expect exit: 0
import torch


@torch.compile
def foo(x):
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1


inp = torch.zeros(3)
print("default:", foo(inp))


@torch.compiler.set_stance("force_eager")
def bar(x):
    return foo(x)


print("decorator:", bar(inp))
with torch.compiler.set_stance("force_eager"):
    print("context manager:", foo(inp))
torch.compiler.set_stance("force_eager")
print("call:", foo(inp))
torch.compiler.set_stance("default")
print("default again:", foo(inp))

with torch.compiler.set_stance("eager_on_recompile"):
    print("eager_on_recompile, cached:", foo(inp))
    print("eager_on_recompile, new shape:", foo(torch.zeros(4, 2)))

with torch.compiler.set_stance("fail_on_recompile"):
    print("fail_on_recompile, cached:", foo(inp))
    try:
        foo(torch.zeros(5, 2, 2))
        print("fail_on_recompile: no error")
    except RuntimeError as e:
        print("fail_on_recompile:", str(e).startswith("Detected recompile"))


@torch.compile
def later(x):
    if torch.compiler.is_compiling():
        return x * 2
    return x * 3


with torch.compiler.set_stance("eager_then_compile"):
    print("eager_then_compile, first:", later(torch.ones(2)))
    print("eager_then_compile, second:", later(torch.ones(2)))
    print("eager_then_compile, third:", later(torch.ones(2)))


@torch.compile
def sets_stance(x):
    torch.compiler.set_stance("force_eager")
    return x + 1


@torch.compile
def calls_forced(x):
    return bar(x) * 2


for f in (sets_stance, calls_forced):
    try:
        f(inp)
        print(f.__name__, "no error")
    except Exception as e:
        print(f.__name__, "forbidden callable" in str(e))
print("stance after:", foo(inp))


class Net(torch.nn.Module):
    def forward(self, x):
        return x + (1 if torch.compiler.is_compiling() else -1)


net = torch.compile(Net())
for _ in range(3):
    net(inp)  # captured, then built code (the module's fast path)
with torch.compiler.set_stance("force_eager"):
    print("module, force_eager:", net(inp))
print("module, default:", net(inp))
