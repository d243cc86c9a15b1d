# Forward pre-hooks and forward hooks on a submodule are followed like user
# code: their ops are in the graph and the attribute a hook reads is guarded,
# so changing it recompiles. A hook on the compiled module itself runs around
# the region, eagerly.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: L['self'][0].double == True
# expect guard: L['self'][0].double == False
# expect ops: aten.add.Tensor aten.mul.Tensor aten.addmm
# dynamo: same
import torch

torch.manual_seed(0)


class Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)
        self.double = True

    def forward(self, x):
        return self.lin(x)


def post(mod, args, out):
    return out * 2 if mod.double else out


m = torch.nn.Sequential(Lin(), torch.nn.ReLU())
m[0].register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
m[0].register_forward_hook(post)
m.register_forward_hook(lambda mod, args, out: out - 1)
x = torch.randn(2, 4)
c = torch.compile(m)
print(torch.allclose(c(x), m(x)))
m[0].double = False
print(torch.allclose(c(x), m(x)))
