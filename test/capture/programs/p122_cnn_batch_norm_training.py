# A small CNN trained in a compiled step: convolutions (one strided, one
# grouped), BatchNorm2d in train mode, ReLU, 2x2 max pooling, a global
# average pool as a mean, a linear classifier and cross-entropy, SGD with
# momentum. The backward graph holds convolution_backward (the input's
# gradient as a transposed convolution, the weight's as GEMMs over the
# input's columns), native_batch_norm_backward and
# max_pool2d_with_indices_backward (the forward returns the pooling's
# indices); the step graph's built steps train like eager, running
# statistics included (test/e2e/test_train_step.py).
# expect graphs: 4
# expect backward: 2
# expect breaks: 2
# expect recompiles: 1
# expect ops: aten.convolution_backward aten.native_batch_norm_backward aten.max_pool2d_with_indices_backward
# dynamo: stdout
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, stride=2, padding=1, groups=2), nn.BatchNorm2d(16), nn.ReLU())
head = nn.Linear(16, 4)
opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.05, momentum=0.9)
x = torch.randn(8, 3, 12, 12)
y = torch.tensor([0, 1, 2, 3, 3, 2, 1, 0])


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(head(model(x).mean((2, 3))), y)
    loss.backward()
    opt.step()
    return loss


# test_train_step.py runs this with more steps and saves the batch, the
# losses and the final state.
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
losses = [step(x, y).item() for i in range(steps)]
print([f"{loss:.4f}" for loss in losses])
print([round(t.sum().item(), 4) for t in model.state_dict().values()])
if len(sys.argv) > 2:
    torch.save({"x": x, "y": y, "losses": losses, "state": model.state_dict()}, sys.argv[2])
