# A 40-step training loop at module level under whole-script capture: each
# iteration records the same step (the SGD update of the last step's gradients,
# then the forward to the loss), so the capture folds those identical graphs into
# one that runs 38 times instead of writing 38 copies (the first step has no
# update, the last one's loss is read by print); the loop's backward break is one
# line of the report with its count, and every occurrence stays in the
# manifest's break list. The folded graph still builds and matches eager on the
# inputs of its first run.
# expect exit: 0
# expect graphs: 4
# expect breaks: 42
# expect runs: 38
# expect break: autograd backward pass: runs outside the forward graphs
# expect ops: aten.addmm aten.relu aten.mse_loss
# expect stderr: runs 38 times (identical bodies folded: graph_2 ... graph_38)
# expect stderr: (x40)
# dynamo: stdout
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(32, 4)
y = x @ torch.tensor([[1.0], [-2.0], [0.5], [0.25]]) + 0.1
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(40):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}")
