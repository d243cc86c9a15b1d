"""Batches from torch's DataLoader enter the graphs as inputs.

A training loop reads its batches from a `torch.utils.data.DataLoader`: the
sampler's `randperm`, each item's indexing and the collate's `stack` are data
loading, which a real loader runs in worker processes and Dynamo never traces.
Recorded, they would put the batch's indices into the graphs as constants, so
that no two steps of the loop were the same graph. While a region records,
`iter(loader)` and each `next()` of its iterator run unrecorded (the tracker is
paused), and the tensors of a batch are inputs of the graphs that use them,
named `next(DataLoader)[i]` (docs/capture.md, "Data loading"). Outside a
region the wrapped methods call torch's own at once.
"""
import functools

from torch.utils._python_dispatch import _get_current_dispatch_mode

_installed = False


def _recording_tracker():
    mode = _get_current_dispatch_mode()
    return mode if getattr(mode, "records_graphs", False) else None


def _unrecorded(method, name):
    """`method`, run with the recording tracker paused, as a break's eager
    call runs but with no break: the tensors it returns are inputs named
    `name` of the graphs that use them."""
    @functools.wraps(method)
    def call(self, *args, **kwargs):
        tracker = _recording_tracker()
        if tracker is None:
            return method(self, *args, **kwargs)
        tracker.pause()
        result = None
        try:
            result = method(self, *args, **kwargs)
            return result
        finally:
            tracker.resume(result, name)
    return call


def install():
    """Wraps DataLoader.__iter__ and its iterators' __next__ (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    from torch.utils.data import dataloader
    dataloader.DataLoader.__iter__ = _unrecorded(dataloader.DataLoader.__iter__,
                                                 "iter(DataLoader)")
    base = dataloader._BaseDataLoaderIter
    base.__next__ = _unrecorded(base.__next__, "next(DataLoader)")
