# Views and layout ops.
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.view aten.transpose.int aten.permute aten.clone
import torch

@torch.compile
def f(x):
    y = x.view(2, 3, 4).transpose(1, 2).permute(2, 0, 1).contiguous()
    return y.reshape(-1)[:5]

x = torch.arange(24.0)
print(f(x).tolist())
