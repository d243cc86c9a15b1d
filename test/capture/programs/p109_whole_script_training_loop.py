# A training loop at module level under whole-script capture: each
# loss.backward() is one labelled break at the user's line (as in Dynamo) and
# one backward graph of the autograd engine's ops (mse_loss_backward, the
# GEMM's gradients), identical each step so folded into one that runs 5 times;
# the backward takes the gradient of the loss as an input (loss.backward()'s
# ones_like seed, `grad(graph_0.output_K)`), and the forward keeps the loss as
# an output; the optimizer's record_function markers are neither ops nor
# breaks, and the update enters the next graph with the backward graph's
# gradients as inputs. Every graph, the backward one included, matches eager.
# expect exit: 0
# expect graphs: 3
# expect backward: 1
# expect breaks: 7
# expect runs: 5
# expect runs: 4
# expect break: autograd backward pass: recorded as a backward graph
# expect ops: aten.addmm aten.mse_loss aten.mse_loss_backward aten.mm
# expect input: user graph_1.output_0
# expect input: user grad(graph_0.output_2)
# dynamo: stdout
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(16, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}")
