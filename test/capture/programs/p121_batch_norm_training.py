# BatchNorm in train mode inside a compiled training step: native_batch_norm
# normalizes over the batch's statistics and updates the running mean and
# variance in place (its ATen schema does not say so; capture records the
# update as ops of the forward graph, and both statistics as mutated buffers).
# Its backward (native_batch_norm_backward) is an op of the backward graph, so
# the call gets a step graph; the built step trains like eager, running
# statistics included (test/e2e/test_train_step.py). A 1-d norm after the
# first layer, a 2-d norm on its output seen as (N, 4, 2, 2).
# expect graphs: 4
# expect backward: 2
# expect breaks: 2
# expect recompiles: 1
# dynamo: stdout
import sys

import torch

torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.bn1 = torch.nn.BatchNorm1d(16)
        self.bn2 = torch.nn.BatchNorm2d(4, momentum=0.2)
        self.fc2 = torch.nn.Linear(16, 1)

    def forward(self, x):
        h = torch.relu(self.bn1(self.fc1(x)))
        h = self.bn2(h.view(-1, 4, 2, 2)).flatten(1)
        return self.fc2(h)


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
x = torch.randn(32, 8)
y = x.sum(1, keepdim=True)


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
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
