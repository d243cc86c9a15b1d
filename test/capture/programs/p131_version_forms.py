# The forms whose bytecode differs most between CPython 3.11, 3.12 and 3.13, in
# one region: a slice read and a slice written (3.12's BINARY_SLICE and
# STORE_SLICE), f-string conversions and format specs (3.13's CONVERT_VALUE,
# FORMAT_SIMPLE, FORMAT_WITH_SPEC), except* (3.12's CALL_INTRINSIC_2), super()
# attribute loads (LOAD_SUPER_ATTR), an inlined comprehension and keyword calls.
# expect graphs: 1
# expect breaks: 0
import torch


class Base(torch.nn.Module):
    def forward(self, x, scale=1.0):
        return (x + 1) * scale


class Model(Base):
    def forward(self, x, names):
        parts = list(names)
        parts[0:1] = ["a"]
        label = f"{parts[0]!r}-{len(parts)}-{parts[-1]!s:>4}|{3.5:.2f}"
        try:
            raise ExceptionGroup("group", [ValueError(label), KeyError("k")])
        except* ValueError as eg:
            n = len(eg.exceptions)
        except* KeyError:
            n += 1
        sizes = [d * 2 for d in x.shape if d > 1]
        y = super().forward(x[1:3], scale=float(n)) + len(sizes)
        return y if label.startswith("'a'-3") else -y


model = Model()
out = torch.compile(model)(torch.ones(4, 2), ("x", "y", "z"))
print(out.sum().item(), out.shape)
