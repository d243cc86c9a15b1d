# Indexing a tensor's shape wrongly raises what python3 raises, inside the
# region, where the program catches it.
# expect graphs: 1
# expect breaks: 0
# dynamo: skip              (torch 2.13's Dynamo stops with an error on x.shape[5])
import torch

errors = []

@torch.compile
def f(x):
    try:
        x.shape["a"]
    except TypeError as e:
        errors.append(str(e))
    try:
        x.shape[5]
    except IndexError as e:
        errors.append(str(e))
    return x + 1

print(f(torch.ones(2)).tolist(), errors)
# what python3 raises, caught inside the region:
assert errors == ["tuple indices must be integers or slices, not str",
                  "tuple index out of range"], errors
