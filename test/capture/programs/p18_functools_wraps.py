# A functools.wraps decorator with try/except inside, as transformers uses.
# expect graphs: 1
# expect breaks: 0
import functools
import torch

def checked(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except KeyError as e:
            raise RuntimeError("bad key") from e
    return wrapper

@checked
def body(x):
    return x.abs() + 1

print(torch.compile(body)(torch.tensor([-1.0, 2.0])).tolist())
