# A training loop at module level under whole-script capture: each
# loss.backward() is one labelled break at the user's line (the autograd
# engine's kernels are not forward-graph ops), the forward that made the loss is
# kept (the loss is an output: it was read by the backward), the optimizer's
# record_function markers are neither ops nor breaks, and the update enters the
# next graph with the gradients as inputs.
# expect exit: 0
# expect graphs: 4
# expect breaks: 7
# expect runs: 3
# expect break: autograd backward pass: runs outside the forward graphs
# expect ops: aten.addmm aten.mse_loss
# expect input: user gradient (autograd backward)
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
