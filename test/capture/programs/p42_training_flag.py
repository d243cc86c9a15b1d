# Dropout reads self.training: guarded as an attribute of the module.
# expect graphs: 1
# expect breaks: 0
# expect guard: L['self'].drop.training == False
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = torch.nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) + 1

m = Net().eval()
print(torch.compile(m)(torch.ones(3)).tolist())
