# A 40-step training loop at module level under whole-script capture: each
# iteration records the same step (the SGD update of the last step's gradients,
# then the forward to the loss), so the capture folds those identical graphs into
# one that runs 39 times instead of writing 39 copies (the first step has no
# update); the loop's backward break is one
# line of the report with its count, and every occurrence stays in the
# manifest's break list. Each backward pass is a backward graph, the same 40
# times: one, run 40 times. The folded graphs still build and match eager on the
# inputs of their first run. (Recorded whole: by default a loop that settles
# is counted after its first iterations, test/e2e/test_settled_loops.py.)
# capture-args: --record-all-iterations
# expect exit: 0
# expect graphs: 3
# expect backward: 1
# expect breaks: 42
# expect runs: 39
# expect runs: 40
# expect break: autograd backward pass: recorded as a backward graph
# expect ops: aten.addmm aten.relu aten.mse_loss aten.threshold_backward
# expect stderr: runs 39 times (identical bodies folded: graph_4 ... graph_78)
# expect stderr: runs 40 times (identical bodies folded: graph_3 ... graph_79)
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
