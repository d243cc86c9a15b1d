# Dropout in training mode and F.cross_entropy reach the dispatcher as
# bernoulli_.float (recorded as its functional twin bernoulli.p) and
# nll_loss_forward: one graph, as Dynamo makes.
# expect graphs: 2
# expect breaks: 0
# expect ops: aten.bernoulli.p aten.nll_loss_forward aten._log_softmax
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x, y):
        logits = self.fc2(self.drop(torch.relu(self.fc1(x))))
        return F.cross_entropy(logits, y), logits


torch.manual_seed(0)
model = torch.compile(Classifier())
x, y = torch.randn(6, 8), torch.tensor([0, 1, 2, 3, 4, 0])
loss, _ = model(x, y)
print(loss.dim(), loss.item() > 0)
model.eval()
with torch.no_grad():
    loss, logits = model(x, y)
print(round(loss.item(), 4), round(F.cross_entropy(logits, y, ignore_index=0).item(), 4))
