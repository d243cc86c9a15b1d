"""Evaluates guard texts against a region's arguments.

Guards are written in Dynamo's readable style and they are also the check: a guard
text is a Python expression over L (the region's arguments) and G (its globals).
"""
import torch


def _match(actual, want):
    """Sizes or strides against a guard's; None in the guard: a dynamic dim."""
    return len(actual) == len(want) and all(w is None or a == w for a, w in zip(actual, want))


def check_tensor(t, dtype, device, requires_grad, size, stride):
    return (isinstance(t, torch.Tensor) and t.dtype == dtype and t.device.type == device
            and t.requires_grad == requires_grad and _match(t.shape, size)
            and _match(t.stride(), stride))


def first_failure(guards, L, G):
    """Returns the text of the first guard that fails (or cannot be evaluated),
    or None when all pass."""
    scope = {"L": L, "G": G, "torch": torch, "check_tensor": check_tensor,
             "___is_grad_enabled": torch.is_grad_enabled}
    for g in guards:
        try:
            ok = eval(g["text"], scope)  # noqa: S307 - texts are dynoc's own guards
        except Exception:
            ok = False
        if not ok:
            return g["text"]
    return None
