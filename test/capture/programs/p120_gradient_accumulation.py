# Gradient accumulation over two micro-batches in one compiled step: the
# second loss.backward() accumulates into the .grad tensors the first one
# made (AccumulateGrad's in-place add, recorded in the second backward graph
# reading the first one's gradient outputs); the update reads the sums. The
# step graph stitches both passes (a gradient accumulated inside the step is a
# value of the step, not a write-back), so the built step trains like eager
# (test/e2e/test_train_step.py). Dynamo reports 2 breaks here (zero_grad on its
# skip list and the optimizer's graph_break(); it does not count a break per
# backward pass in the loop), so only stdout is compared with its run.
# expect graphs: 6
# expect backward: 4
# expect breaks: 4
# expect recompiles: 1
# expect input: user graph_1.output_0
# dynamo: stdout
import sys

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(32, 8)
y = x.sum(1, keepdim=True)


@torch.compile
def step(x, y):
    opt.zero_grad()
    for xb, yb in ((x[:16], y[:16]), (x[16:], y[16:])):
        loss = torch.nn.functional.mse_loss(model(xb), yb) / 2
        loss.backward()
    opt.step()
    return loss


# test_train_step.py runs this with more steps and saves the batch and losses.
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
losses = [step(x, y).item() for i in range(steps)]
print([f"{loss:.4f}" for loss in losses])
print([round(p.sum().item(), 4) for p in model.parameters()])
if len(sys.argv) > 2:
    torch.save({"x": x, "y": y, "losses": losses}, sys.argv[2])
