"""The capture extension (`_dynoc_C`: the frame hook, the bytecode evaluator,
the C dispatcher and guard checks), loaded on first use.

A leaf: it imports nothing of dynoc but the version check. The region layer
hands it the initializer at its own import (`set_initializer`), which gives
the extension the callbacks it calls back into Python with (as Dynamo hands
`set_eval_frame` its callback), so the layers below the region layer (the
dispatcher, the JIT, the recorder, the session) reach the extension here
instead of reaching up into `_region`.
"""
import sys

from ._version import unsupported_python_message

_C = None
_initializer = None  # (the extension module) -> None, set by _region


def set_initializer(initialize):
    """Called once by the region layer: `initialize(_dynoc_C)` runs when the
    extension is first loaded."""
    global _initializer
    _initializer = initialize


def ext():
    """The initialized extension module (loaded now if it is not yet);
    RuntimeError on a Python version capture does not run."""
    global _C
    if _C is None:
        why = unsupported_python_message(sys.version_info, sys.executable)
        if why:
            raise RuntimeError(why)
        if _initializer is None:  # dynoc/__init__ imports _region first
            raise RuntimeError("dynoc: the capture extension was asked for before "
                               "dynoc's region layer was imported")
        import _dynoc_C
        _initializer(_dynoc_C)
        _C = _dynoc_C
    return _C


def loaded():
    """The extension if it has been loaded, else None (never loads it)."""
    return _C
