"""Walking an op's arguments and results: the tensors in nested containers,
and the same structure with each tensor the graph knows as its Value. A leaf
the recorder and the collective recorder share."""
import torch


def _tensors(obj):
    """The tensors in obj (nested tuples, lists and dicts), in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for x in obj for t in _tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _tensors(x)]
    return []



def _as_values(obj, value_of):
    """`obj` (an op's args or kwargs) with each tensor the graph knows replaced
    by its Value."""
    if isinstance(obj, torch.Tensor):
        v = value_of(obj)
        return obj if v is None else v
    if isinstance(obj, (list, tuple)):
        return type(obj)(_as_values(x, value_of) for x in obj)
    if isinstance(obj, dict):
        return {k: _as_values(v, value_of) for k, v in obj.items()}
    return obj
