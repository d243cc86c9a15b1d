# A new batch size with the same computation: the recompile makes the batch dim
# dynamic (one graph, `?` in its types, None in the guard) instead of a second
# static graph. Dynamo makes a second, dynamic graph here: only breaks compared.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect guard: check_tensor(L['input'], torch.float32, device='cpu', requires_grad=False, size=[None, 8], stride=[8, 1])
# dynamo: breaks<=
import torch

torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4)).eval()
cm = torch.compile(m)
with torch.no_grad():
    for b in (2, 3, 5):
        x = torch.randn(b, 8)
        print(b, torch.allclose(cm(x), m(x)))
