# A class pattern that CPython rejects raises CPython's own TypeError under
# dynoc's evaluator (too many positional sub-patterns, a __match_args__ that
# is not a tuple), and the region's except clause catches it as in a plain
# run. The program checks the messages against the same match run outside
# any region (Dynamo words them differently, so it is not the reference).
# expect graphs: 3
# expect breaks: 0
# dynamo: skip
import torch


class Point:
    __match_args__ = ("x",)

    def __init__(self):
        self.x = 1


class Listy:
    __match_args__ = ["x"]


def classify(case):
    try:
        match Point() if case != 2 else Listy():
            case Point(1, 2) if case == 0:
                return "matched"
            case Point(1, x=1) if case == 1:
                return "matched"
            case Listy(1):
                return "matched"
    except TypeError as e:
        return str(e)
    return "no match"


@torch.compile
def f(t, case):
    return t * 2, classify(case)


for case in range(3):
    out, msg = f(torch.ones(2), case)
    assert msg == classify(case), (msg, classify(case))
    print(out.tolist(), msg)
