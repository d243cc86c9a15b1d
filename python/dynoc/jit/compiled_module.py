"""What `dynoc.compile(module)` / `torch.compile(module)` return: a module.

Mirrors torch._dynamo's OptimizedModule, so a script written for torch.compile
keeps working: the original module is the submodule `_orig_mod` (state_dict keys
carry its prefix, as Dynamo's do), parameters() yields the same Parameter
objects (an optimizer built from them updates what capture records), and
attribute reads, writes, train()/eval() and to() reach the original. Calls run
the capture region; the wrapper's own hooks run around it, the original's
inside it (as Dynamo compiles the original's __call__).
"""
import torch
from torch.nn.modules import module as _mm

from .. import _stance
from .dispatch import MISS as _MISS

# Attributes that live on the wrapper itself; every other one is the original's.
_OWN = {"_orig_mod", "_dynoc_region", "forward", "__dict__", "_super_module_initialized"}


class CompiledModule(torch.nn.Module):
    def __init__(self, mod, region):
        object.__setattr__(self, "_orig_mod", mod)
        self._super_module_initialized = False
        super().__init__()
        self._super_module_initialized = True
        self._orig_mod = mod  # registered as a submodule: its parameters are ours
        self._dynoc_region = region

    def forward(self, *args, **kwargs):
        return self._dynoc_region(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        # nn.Module.__call__ goes through two Python frames before forward;
        # with no hook on the wrapper (the original's are the region's) the
        # region is called directly, as torch's own fast path would.
        d = self.__dict__
        if d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"] or \
                d["_backward_pre_hooks"] or _mm._global_forward_hooks or \
                _mm._global_forward_pre_hooks or _mm._global_backward_hooks or \
                _mm._global_backward_pre_hooks or d.get("_compiled_call_impl") is not None:
            return torch.nn.Module.__call__(self, *args, **kwargs)
        region = d["_dynoc_region"]
        fast = region._fast  # Region.__call__'s first step, one frame less
        # (a stance other than the default is Region.__call__'s to apply)
        if fast and not kwargs and _stance.current() is None:
            result = fast(*args)
            if result is not _MISS:
                return result
        return region(*args, **kwargs)

    def _get_name(self):
        # print(model) shows what it shows under torch.compile.
        return "OptimizedModule"

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        # nn.Module.__init__ sets the default; the original's mode is the one.
        if self._super_module_initialized:
            self._orig_mod.training = value

    def __len__(self):
        return len(self._orig_mod)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in _OWN:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in _OWN:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __dir__(self):
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]

    def __reduce__(self):
        return (type(self), (self._orig_mod, self._dynoc_region))


def forward_inside_region(cm, *args, **kwargs):
    """A compiled module called inside another region: its original is
    followed as any module call is (Dynamo inlines nested compiles too)."""
    return cm._orig_mod(*args, **kwargs)
