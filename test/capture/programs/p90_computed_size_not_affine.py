# A decision on a size that is not affine in the input's sizes (a strided
# convolution's output: a floor division) cannot be a symbolic guard: the
# variant stays static, with the reason logged, and each size recompiles.
# expect graphs: 3
# expect breaks: 0
# expect recompiles: 2
# expect stderr: is not affine in the inputs' sizes
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch

conv = torch.nn.Conv2d(1, 2, 3, stride=2)
torch.nn.init.constant_(conv.weight, 0.1)
torch.nn.init.zeros_(conv.bias)


@torch.compile
def f(x):
    y = conv(x)
    if y.size(-1) > 3:
        return y.mean()
    return y.sum()


with torch.no_grad():
    for n in (9, 10, 11):
        print(round(f(torch.ones(1, 1, n, n)).item(), 4))
