# A DCGAN-style generator with a GPT-style position embedding:
# ConvTranspose2d (grouped too), leaky_relu and arange(start, end) in one
# graph that builds.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.convolution aten.leaky_relu aten.arange.start aten.embedding
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(4, 6, 4, 2, 1, bias=False)
        self.up2 = nn.ConvTranspose2d(6, 2, 3, 1, 0, groups=2)
        self.pos = nn.Embedding(16, 2)

    def forward(self, z):
        pos = torch.arange(3, 7)
        h = F.leaky_relu(self.up1(z), 0.2)
        return torch.tanh(self.up2(h)) + self.pos(pos).sum()


torch.manual_seed(0)
gen = Generator()
g = torch.compile(gen)
with torch.no_grad():
    out = g(torch.randn(2, 4, 5, 5))
print(tuple(out.shape), round(out.sum().item(), 3))
