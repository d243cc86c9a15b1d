# Buffers become named buffer inputs (BatchNorm in eval mode).
# expect graphs: 1
# expect breaks: 0
# expect input: buffer bn.running_mean
# expect input: buffer bn.running_var
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)

torch.manual_seed(0)
m = Net().eval()
x = torch.randn(3, 4)
print(torch.allclose(torch.compile(m)(x), m(x)))
