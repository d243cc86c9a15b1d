# A forward hook on a submodule: the evaluator follows the hook with the
# forward, so its op is in the graph (no break).
# expect graphs: 1
# expect breaks: 0
# expect ops: aten.mul.Tensor aten.addmm aten.relu
import torch

seen = []
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.ReLU())
m[0].register_forward_hook(lambda mod, inp, out: out * 2)
x = torch.randn(2, 3)
print(torch.allclose(torch.compile(m)(x), m(x)))
