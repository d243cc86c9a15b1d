# A compiled training step (zero_grad, forward, loss.backward(), SGD with
# momentum): the forward graph, then the break at loss.backward() that Dynamo
# also makes, then a backward graph of the ops the autograd engine ran
# (mse_loss_backward, threshold_backward, the GEMMs' gradients), reading the
# values autograd saved as outputs of the forward graph and giving each
# parameter's gradient as an output (the manifest's "grads"); the update graph
# reads those gradients. The backward graph builds and matches autograd's
# gradients. The step that opt.step() records depends on the optimizer's
# hyperparameters and state (the momentum buffers appear at the first step), so
# those are guarded: the second call recompiles (its update reads and writes
# back the momentum buffers, named by where they live), the third reuses it.
# Dynamo breaks more often here (Optimizer.zero_grad is on its skip list, and
# its optimizer step inserts breaks of its own).
# expect graphs: 4
# expect backward: 2
# expect breaks: 2
# expect recompiles: 1
# expect break: autograd backward pass: recorded as a backward graph
# expect ops: aten.mse_loss_backward aten.threshold_backward aten.mm aten.sum.dim_IntList
# expect input: user graph_1.output_0
# expect mutation: G['opt'].state[G['opt'].param_groups[0]['params'][0]]['momentum_buffer']
# expect stderr: guard failed: ___optimizer_state(G['opt']) == "[([('dampening', 0)
# dynamo: breaks<=
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(32, 8)
y = x.sum(1, keepdim=True)


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


for i in range(3):
    print(f"{step(x, y).item():.5f}")
