# A custom autograd.Function: its forward is followed like user code; its
# Python backward runs inside the autograd engine, so the ATen ops it calls are
# recorded into the backward graph like any other backward kernel (g * 2 * a,
# reading the tensor it saved). The backward graph matches eager's gradient.
# expect graphs: 1
# expect backward: 1
# expect breaks: 1
# expect break: autograd backward pass: recorded as a backward graph
# expect ops: aten.mul.Tensor aten.mm
# dynamo: stdout
import torch

torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(4, 4))
x = torch.randn(3, 4)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * 2 * a


@torch.compile
def step(x):
    loss = Square.apply(x @ w).sum()
    loss.backward()
    return loss


print(f"{float(step(x)):.4f} {w.grad.sum().item():.4f}")
