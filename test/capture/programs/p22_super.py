# super().forward() in a subclass.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.addmm aten.mul.Tensor
import torch

class Scaled(torch.nn.Linear):
    def forward(self, x):
        return super().forward(x) * 0.5

torch.manual_seed(0)
m = Scaled(3, 3)
x = torch.randn(2, 3)
print(torch.allclose(torch.compile(m)(x), m(x)))
