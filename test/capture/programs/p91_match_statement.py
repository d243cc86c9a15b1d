# A match statement runs in dynoc's evaluator: class patterns (with
# __match_args__ and keywords), mapping patterns, sequence patterns and
# literals select the computation, each decision guarded (the subject's type,
# the keys a mapping has, a sequence's length, the values compared), so other
# configurations recompile. One graph per configuration, no breaks.
# expect graphs: 4
# expect breaks: 0
# expect recompiles: 4
# expect guard: L['cfg'].kind == 'scale'
# expect guard: len(L['cfg']) == 2
# expect guard: 'act' in L['cfg']
# dynamo: breaks<=
import dataclasses

import torch


@dataclasses.dataclass
class Scale:
    factor: float
    kind: str = "scale"


@torch.compile
def f(x, cfg):
    match cfg:
        case Scale(factor, kind="scale"):
            return x * factor
        case {"act": "relu", **rest}:
            return torch.relu(x) + len(rest)
        case [a, b]:
            return x * a + b
        case _:
            return x


x = torch.linspace(-1, 1, 6)
for cfg in (Scale(3.0), {"act": "relu", "n": 1}, (2, 1), Scale(0.5), "other"):
    print([round(v, 4) for v in f(x, cfg).tolist()])
