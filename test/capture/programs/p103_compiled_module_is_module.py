# torch.compile(model) is still a module, as Dynamo's OptimizedModule is:
# parameters() are the original Parameter objects (an optimizer built from them
# updates the model), train()/eval() reach the original, state_dict() keys carry
# the _orig_mod prefix, the model's own methods and attributes are forwarded.
# expect graphs: 2
# expect breaks: 0
# expect ops: aten.addmm
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.drop = nn.Dropout(0.5)
        self.tag = "net"

    def forward(self, x):
        return self.drop(self.fc(x))

    def num_params(self):
        return sum(p.numel() for p in self.parameters())


torch.manual_seed(0)
net = Net()
model = torch.compile(net)
print(isinstance(model, nn.Module), model.num_params(), model.tag, model._orig_mod is net)
print([p is q for p, q in zip(model.parameters(), net.parameters())])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model.eval()
print(model.training, net.training)
x = torch.ones(2, 8)
with torch.no_grad():
    before = model(x).sum().item()
model.train()
print(model.training, net.training)
loss = model(x).sum() * 0  # dropout in training mode: the value is random
loss = loss + net.fc.weight.sum()
loss.backward()
opt.step()
model.eval()
with torch.no_grad():
    after = model(x).sum().item()
print(round(before, 4), round(after, 4), before != after)
print(sorted(model.state_dict().keys()))
model.tag = "changed"
print(net.tag)
torch.save(model.state_dict(), "/dev/null")
