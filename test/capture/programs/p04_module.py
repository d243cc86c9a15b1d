# A module region: parameters become named parameter inputs.
# expect graphs: 1
# expect breaks: 0
# expect input: parameter fc.weight
# expect input: parameter fc.bias
# expect ops: aten.addmm aten.relu
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))

torch.manual_seed(0)
m = Net()
cm = torch.compile(m)
x = torch.randn(2, 8)
print(torch.allclose(cm(x), m(x)))
