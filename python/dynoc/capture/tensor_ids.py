"""Maps keyed by a tensor's id() that do not keep the tensor alive.

A recording keys what it knows about a tensor (its Value, its source, the
name it enters later graphs by) by the tensor's identity, and Python gives a
dead object's id to the next one. Holding every recorded tensor kept the ids
unique, and made the capture of a long loop hold every activation of every
iteration (a training loop grew without limit; docs/capture.md, "Memory").
Instead a tracked tensor has a weak reference whose callback marks its id
dead, and every map of the registry drops the dead ids before it is read or
written: a new tensor that reuses an id never meets the facts of the old one.

What the backward pass matches by memory (ForwardMemory) is held, but only
while a backward pass may read it.
"""
import weakref

import torch


class TensorIds:
    """The registry: which ids are tracked, which died since the last purge."""

    def __init__(self):
        self._refs = {}  # id -> weakref to the tensor
        self._dead = []  # ids whose tensors died; appended to by weakref callbacks
        self._maps = []
        self._strong = []  # tensors that take no weak reference (kept, as before)

    def map(self):
        """A new dict keyed by ids of tracked tensors."""
        m = IdMap(self)
        self._maps.append(m)
        return m

    def track(self, t):
        """Keys of `t`'s id in the maps last as long as `t` does."""
        self.purge()
        key = id(t)
        if key in self._refs:
            return
        dead = self._dead
        try:
            self._refs[key] = weakref.ref(t, lambda _ref, key=key: dead.append(key))
        except TypeError:
            self._strong.append(t)

    def purge(self):
        """Drops the ids of dead tensors from every map."""
        while self._dead:
            dead = self._dead[:]
            del self._dead[:len(dead)]
            for key in dead:
                ref = self._refs.get(key)
                if ref is None or ref() is not None:
                    continue  # tracked again since, by a live tensor
                del self._refs[key]
                for m in self._maps:
                    dict.pop(m, key, None)

    def clear(self):
        self._refs.clear()
        self._dead.clear()
        self._strong.clear()


class IdMap(dict):
    """A dict keyed by tensor ids whose dead keys are gone before each use."""

    def __init__(self, registry):
        super().__init__()
        self._registry = registry

    def _fresh(self):
        if self._registry._dead:
            self._registry.purge()

    def get(self, key, default=None):
        self._fresh()
        return dict.get(self, key, default)

    def __getitem__(self, key):
        self._fresh()
        return dict.__getitem__(self, key)

    def __contains__(self, key):
        self._fresh()
        return dict.__contains__(self, key)

    def __setitem__(self, key, value):
        self._fresh()
        dict.__setitem__(self, key, value)

    def __delitem__(self, key):
        self._fresh()
        dict.__delitem__(self, key)

    def pop(self, key, *default):
        self._fresh()
        return dict.pop(self, key, *default)

    def setdefault(self, key, default=None):
        self._fresh()
        return dict.setdefault(self, key, default)

    def items(self):
        self._fresh()
        return dict.items(self)

    def keys(self):
        self._fresh()
        return dict.keys(self)

    def values(self):
        self._fresh()
        return dict.values(self)

    def __iter__(self):
        self._fresh()
        return dict.__iter__(self)

    def __len__(self):
        self._fresh()
        return dict.__len__(self)


class ForwardMemory:
    """Forward Values by the memory their tensors occupy (dtype, shape,
    strides, offset, address): how the backward pass finds the values autograd
    saved, which it unpacks as new tensor objects over the same memory.

    An entry holds its tensor, so that no other tensor takes that memory while
    the entry stands; and only while a backward pass may read it: tensors
    recorded with grad mode on (autograd saves nothing otherwise), kept until
    the backward pass after the next one ends (two backward passes over one
    forward, as retain_graph=True allows, both find them). A loop's capture
    holds one or two iterations' saved values, not all of them.
    """

    def __init__(self):
        self._entries = {}  # key -> (Value, tensor, backward passes ended before it)
        self._passes = 0

    @staticmethod
    def key(t):
        """The key of `t`'s memory, or None (a tensor without storage)."""
        try:
            return (t.dtype, tuple(t.shape), t.stride(), t.storage_offset(), t.data_ptr())
        except RuntimeError:
            return None

    def add(self, t, value):
        if not torch.is_grad_enabled():
            return
        key = self.key(t)
        if key is not None:
            self._entries[key] = (value, t, self._passes)

    def get(self, t):
        key = self.key(t)
        entry = self._entries.get(key) if key is not None else None
        return entry[0] if entry is not None else None

    def backward_ended(self):
        """Drops the entries recorded before the backward pass before this one."""
        self._passes += 1
        self._entries = {k: e for k, e in self._entries.items() if e[2] >= self._passes - 1}

    def clear(self):
        self._entries.clear()
