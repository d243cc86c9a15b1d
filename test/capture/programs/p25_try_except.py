# try/except inside the region; the handled exception does not break.
# expect graphs: 1
# expect breaks: 0
import torch

def lookup(table, key, x):
    try:
        return table[key](x)
    except KeyError:
        return x

@torch.compile
def f(x):
    table = {"neg": torch.neg}
    return lookup(table, "neg", x) + lookup(table, "missing", x)

print(f(torch.ones(2)).tolist())
