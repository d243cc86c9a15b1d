"""What a region's call writes into Python objects (docs/capture.md, "Results
and side effects"): the attributes, items and globals it assigns (by source,
or found by their path from the call's arguments when the evaluator reached
them unnamed), which of those writes last, and the containers it changes by
their methods. A mixin of the recorder's Tracker (capture/recorder.py);
capture/results.py describes the values, jit/side_effects.py replays them."""
import torch

from . import guards as _guards, results

_UNREAD = object()  # a source with no value to compare (lasting_writes)
# Container methods a compiled call makes again with their arguments: what
# they do depends on those alone (not on a value they return to the program).
REPLAYED_METHODS = {"append", "extend", "insert", "add", "update", "clear"}


class PythonWrites:
    def on_store(self, source, constant=False, value_source=""):
        """The region wrote what `source` names (an attribute, an item, a
        global): reads of it from now on see the region's own value. The
        sources whose last write was a literal of the code (`self.ready =
        True`) are in constant_writes: every call writes that same value.
        Those whose last write was a tensor's size (`self.batch_size =
        keys.shape[0]`, value_source naming the size) are in size_writes: the
        same value in every call of a static variant (its tensors' shapes
        are guarded)."""
        if source not in self.written_before:
            self.written_before[source] = self._source_value(source)
            self.written_after_breaks[source] = len(self.breaks)
        self.written.add(source)
        if constant:
            self.constant_writes.add(source)
        else:
            self.constant_writes.discard(source)
        if value_source and _guards.is_size_source(value_source):
            self.size_writes[source] = value_source
        else:
            self.size_writes.pop(source, None)

    def on_anonymous_store(self, owner, key, is_attr, constant=False, value_source=""):
        # Neither the object nor the value it had is read or kept here: a
        # read could run the program's own __getattr__/__getitem__, and a
        # reference would keep alive what the program expects collected.
        # The object is known by id and type until finish names it.
        # type(), not isinstance: isinstance may read `__class__` through the
        # program's own __getattribute__.
        if issubclass(type(owner), torch.Tensor):
            return  # `t[i] = v` is an ATen call the recorder sees
        name = key if isinstance(key, (str, int)) else None
        slot = (id(owner), name if name is not None else ("unnamed", id(key)))
        if slot not in self.anonymous_writes:
            self.anonymous_writes[slot] = (type(owner), name, type(key).__name__, is_attr,
                                           len(self.breaks))
        if constant:
            self.anonymous_constants.add(slot)
        else:
            self.anonymous_constants.discard(slot)
        if value_source and _guards.is_size_source(value_source):
            self.anonymous_sizes[slot] = value_source
        else:
            self.anonymous_sizes.pop(slot, None)

    def on_anonymous_read(self, owner, name, value):
        # As on_anonymous_store: known by id and type until finish names it
        # (a read after the call wrote the attribute sees its own value).
        slot = (id(owner), name)
        if slot not in self.anonymous_writes and slot not in self.anonymous_reads:
            self.anonymous_reads[slot] = (type(owner), value)

    def on_container_method(self, container, method, source, args=(), kwargs=None):
        """A list, dict, set or bytearray changed by its own method. On a
        container an argument holds (or a global), the calls are kept with
        their arguments, in order: finish replays those of REPLAYED_METHODS
        (capture/results.py describes the arguments)."""
        call = (method, tuple(args), kwargs)
        if source and not self._written(source):
            self.mutated_containers.setdefault(source, method)
            self.container_calls.append((source, call))
        elif not source:
            self.anonymous_containers.setdefault(id(container), (type(container), method))
            self.container_calls.append(((id(container), type(container)), call))

    def _named(self, paths, ident, kind):
        """The source of the object of id `ident` and type `kind` the
        arguments hold, or None (one that died and whose id was reused by
        another object is told apart by its type)."""
        base = paths.get(ident)
        if base is None:
            return None
        value = self._source_value(base)
        return base if value is not _UNREAD and type(value) is kind else None

    def _name_anonymous_writes(self):
        """finish: the writes into objects without a source that are objects
        the call's arguments hold (found by their paths from the arguments)
        become writes of those paths, replayed with the value they hold now;
        a container an argument holds that changed by its methods cannot be
        replayed (unreplayable). Objects the arguments do not hold are taken
        as the call's own. The Python values read from such objects before
        the call wrote them are guarded by those paths."""
        if not self.anonymous_writes and not self.anonymous_containers and \
                not self.anonymous_reads:
            return
        L = self.call_scope[0] if self.call_scope is not None else {}
        paths = results.paths_from({f"L[{k!r}]": v for k, v in L.items()})
        for (ident, name), (kind, value) in self.anonymous_reads.items():
            base = self._named(paths, ident, kind)
            if base is not None:
                source = f"{base}.{name}"
                self.value_guards.setdefault(source, _guards.value_guard_text(source, value))
        for slot, (kind, key, key_type, is_attr, breaks) in self.anonymous_writes.items():
            ident = slot[0]
            base = self._named(paths, ident, kind)
            if base is None:
                continue
            if key is None:
                self.unreplayable.append(f"it writes an item of {base} keyed by a {key_type}")
                continue
            target = f"{base}.{key}" if is_attr else f"{base}[{key!r}]"
            self.written.add(target)
            if slot in self.anonymous_constants:
                self.constant_writes.add(target)
            if slot in self.anonymous_sizes:
                self.size_writes[target] = self.anonymous_sizes[slot]
            self.written_before.setdefault(target, _UNREAD)  # replayed: its value now
            self.written_after_breaks.setdefault(target, breaks)
        for ident, (kind, method) in self.anonymous_containers.items():
            base = self._named(paths, ident, kind)
            if base is not None:
                self.mutated_containers.setdefault(base, method)
        # Container calls by the name of their container (None: the call's own).
        self.container_calls = [
            (self._named(paths, *where) if isinstance(where, tuple) else where, call)
            for where, call in self.container_calls]

    def _describe_container_calls(self, describe):
        """finish: the container calls on objects the arguments hold (or
        globals), as side effects replayed in order after the graph
        ({"target": container, "call": method, "args": descriptions}); a
        method not in REPLAYED_METHODS, keywords, or an argument that cannot
        be made again is unreplayable, with its reason."""
        for src, (method, args, kwargs) in self.container_calls:
            if src is None or src in self.written:  # the call's own, or replaced whole
                continue
            where = f"it changes {src} with {method}()"
            if method not in REPLAYED_METHODS or kwargs:
                self.unreplayable.append(where)
                continue
            descs = [describe(a) for a in args]
            why = next((results.problem(d) or f"a Python {results.python_scalar(d)} the "
                        "call computed" for d in descs
                        if results.problem(d) or results.python_scalar(d)), None)
            if why:
                self.unreplayable.append(f"{where} of {why}")
                continue
            self.side_effects.append({"target": src, "call": method, "args": descs})

    def _source_value(self, source):
        """The value `source` names now in the region's call scope, or
        _UNREAD (absent, or not readable)."""
        if self.call_scope is None:
            return _UNREAD
        L, G = self.call_scope
        try:
            return eval(source, {**_guards._scope(), "L": L, "G": G})  # noqa: S307 - dynoc's own text
        except Exception:  # noqa: BLE001 - an attribute not there yet, say
            return _UNREAD

    def lasting_writes(self):
        """The sources the region wrote whose value is not the one it found
        (a write undone within the call, as transformers' output collector
        sets and resets its flag, is no side effect)."""
        return sorted(s for s in self.written
                      if self.written_before.get(s, _UNREAD) is _UNREAD or
                      self._source_value(s) is not self.written_before[s])

    def _written(self, source):
        return any(source == w or source.startswith((w + ".", w + "["))
                   for w in self.written)

    def _argument_path(self, t):
        """A source for tensor `t` the evaluator did not name: its path from
        the call's arguments (a cache object reached through **kwargs), or
        None. The paths are found once per call, at the first need."""
        if self._paths is None:
            L = self.call_scope[0] if self.call_scope is not None else {}
            self._paths = results.paths_from({f"L[{k!r}]": v for k, v in L.items()})
        return self._paths.get(id(t))

    def _held_by_argument(self, src):
        """Does `src` name something inside an argument (not the argument
        itself, not a module's state: a module's tensors are its weights)?"""
        if not src.startswith("L[") or self.call_scope is None:
            return False
        end = src.find("]")
        if end < 0 or end == len(src) - 1:
            return False
        try:
            root = self.call_scope[0][eval(src[2:end])]  # noqa: S307 - dynoc's own text
        except Exception:  # noqa: BLE001
            return False
        # A module's tensors are its weights; an optimizer's, its state.
        return not isinstance(root, (torch.nn.Module, torch.optim.Optimizer))
