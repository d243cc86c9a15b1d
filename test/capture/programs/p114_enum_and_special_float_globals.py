# Globals holding enum members (a str enum, an int enum) and special floats are
# guarded with texts that evaluate: the member's value (G['MODE'] == 'fast'),
# float('inf'), and `x != x` for NaN (NaN equals nothing). Calls that change
# nothing reuse the graph; changing the str enum member recompiles once.
# expect graphs: 2
# expect breaks: 0
# expect recompiles: 1
# expect guard: G['MODE'] == 'fast'
# expect guard: G['LEVEL'] == 2
# expect guard: G['CLAMP'] == float('inf')
# expect guard: G['FILL'] != G['FILL']
# dynamo: same
import enum

import torch


class Mode(str, enum.Enum):
    FAST = "fast"
    SLOW = "slow"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


MODE = Mode.FAST
LEVEL = Level.HIGH
CLAMP = float("inf")
FILL = float("nan")


@torch.compile
def f(x):
    y = x * 2 if MODE == Mode.FAST else x * 3
    y = y + LEVEL
    y = y + x / CLAMP
    return y + (1.0 if FILL != FILL else 0.0)


x = torch.ones(3)
print(f(x).tolist())
print(f(x).tolist())
print(f(x).tolist())
MODE = Mode.SLOW
print(f(x).tolist())
print(f(x).tolist())
