# torch.autograd.grad(create_graph=True) (double backward): a backward graph
# cannot express a differentiable backward pass, so the pass runs outside the
# graphs, with a break that says so (never a silent wrong gradient); what it
# returns enters the next graph as a named input, and the gradient penalty
# computed from it matches eager.
# expect graphs: 2
# expect backward: 0
# expect breaks: 1
# expect break: autograd backward pass with create_graph=True (double backward): runs outside the graphs, not recorded
# expect input: user gradient (autograd backward, not recorded)
# dynamo: stdout
import torch

torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(4, 4))
x = torch.randn(3, 4)


@torch.compile
def gradient_penalty(x):
    y = (x @ w).tanh().sum()
    (g,) = torch.autograd.grad(y, w, create_graph=True)
    return (g * g).sum()


print(f"{float(gradient_penalty(x)):.4f}")
