# nn.Module.compile() compiles the module in place: its weights are recorded as
# parameters (as for torch.compile(module)), not constants. torch 2.13's
# Dynamo makes no graph of this call (it skips the top-level frame of
# nn.Module._call_impl), so only stdout is compared.
# expect graphs: 1
# expect breaks: 0
# expect input: parameter weight
# expect input: parameter bias
# dynamo: stdout
import torch

torch.manual_seed(0)
m = torch.nn.Linear(3, 3)
m.compile()
x = torch.ones(2, 3)
print(m(x).shape, torch.allclose(m(x), torch.nn.functional.linear(x, m.weight, m.bias)))
