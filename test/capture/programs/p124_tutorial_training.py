# A training script in the shape every torch.compile tutorial has: the compiled
# module is still a module (print, isinstance OptimizedModule, parameters() for
# AdamW, train()/eval() reaching dropout, state_dict with _orig_mod. keys saved
# and reloaded). The backward and the optimizer step run outside the compiled
# region: the report says they ran in eager PyTorch.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect input: parameter 0.weight
# expect stderr: eager backward:
# jit: random
import os
import tempfile

import torch
import torch._dynamo

torch.manual_seed(0)


def make():
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                               torch.nn.Linear(16, 2))


model = torch.compile(make())
print(model)
print(isinstance(model, torch._dynamo.eval_frame.OptimizedModule), isinstance(model, torch.nn.Module))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
x = torch.randn(32, 8)
y = torch.randint(0, 2, (32,))
for epoch in range(3):
    model.train()
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean()
    print(epoch, model.training, round(loss.item(), 4), round(acc.item(), 4))

path = os.path.join(tempfile.mkdtemp(), "model.pt")
torch.save(model.state_dict(), path)
state = torch.load(path)
print(sorted(state)[:2])
restored = make()
restored.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in state.items()})
with torch.no_grad():
    print(torch.allclose(restored.eval()(x), model(x)))
