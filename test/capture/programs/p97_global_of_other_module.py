# A followed call into another module reads that module's global: the guard
# names the module (___G('p97_helper')['FACTOR'] == 3), not the region's own
# globals, so later calls reuse the graph until the global changes.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: ___G('p97_helper')['FACTOR'] == 3
# dynamo: same
import sys
import types

import torch

helper = types.ModuleType("p97_helper")
exec("FACTOR = 3\n\ndef scale(x):\n    return x * FACTOR\n", helper.__dict__)
sys.modules["p97_helper"] = helper


@torch.compile
def f(x):
    return helper.scale(x) + 1


for factor in (3, 3, 4):
    helper.FACTOR = factor
    print(f(torch.ones(2)).tolist())
