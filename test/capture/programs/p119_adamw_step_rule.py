# A compiled training step with AdamW (decoupled weight decay: the parameter is scaled by 1 - lr * wd, both tensors), under dynoc's optimizer rule
# (docs/training.md, "Optimizer rules"): the update runs torch's capturable
# formulation, so the step count stays a tensor of the optimizer's state (read
# and written back, +1 per step) and the learning rate is a tensor input named
# where it lives. The only recompile is the second step's (the state appears);
# the learning-rate change at the fourth step is a new input value, not a
# recompile. The step count and the rate are not in the optimizer-state guard.
# After 5 steps the parameters are eager's (printed to 4 decimals). Dynamo
# breaks more often here (zero_grad and parts of the optimizer step).
# expect graphs: 4
# expect backward: 2
# expect breaks: 2
# expect recompiles: 1
# expect ops: aten.lerp.Scalar aten.addcmul aten.addcdiv aten.pow.Scalar
# expect input: buffer G['opt'].param_groups[0]['lr']
# expect mutation: G['opt'].state[G['opt'].param_groups[0]['params'][0]]['step']
# expect mutation: G['opt'].state[G['opt'].param_groups[0]['params'][3]]['exp_avg_sq']
# dynamo: breaks<=
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
x = torch.randn(32, 8)
y = x.sum(1, keepdim=True)


@torch.compile
def step(x, y):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    return loss


for i in range(5):
    if i == 3:
        opt.param_groups[0]["lr"] = 0.005
    print(f"{step(x, y).item():.4f}")
print([round(p.sum().item(), 4) for p in model.parameters()])
