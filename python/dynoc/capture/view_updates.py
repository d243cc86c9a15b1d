"""In-place updates of views, recorded functionally (docs/capture.md, "How it
works"): the update's op on the view, then slice_scatter/select_scatter of
its result back into each base up the chain, as AOTAutograd's
functionalization does; other views of that base become stale. A mixin of
the recorder's Tracker (capture/recorder.py), whose Values and graphs it
uses."""
import torch

from . import mlir_writer as mw
from .graph import Node, Value


class ViewUpdates:
    def _refuse_stale(self, t):
        v = self.values.get(id(t))
        if v is not None and v.vid in self.stale_vids:
            raise mw.Unencodable("reads a view whose base was updated in place through "
                                 "another view")

    # The view ops whose update scatters back into their input, and how.
    _SCATTER = {"aten.slice.Tensor": ("aten.slice_scatter", torch.ops.aten.slice_scatter.default),
                "aten.select.int": ("aten.select_scatter", torch.ops.aten.select_scatter.default),
                "aten.alias": None, "aten.detach": None}

    def _view_chain(self, view):
        """The nodes that made `view` from its base, outermost last, for an
        in-place update of it recorded functionally (as AOTAutograd's
        functionalization does): the update's result scatters back through
        them into the base. Raises Unencodable where it cannot."""
        if view.requires_grad or view._base.requires_grad:
            raise mw.Unencodable("in-place update of a view of a tensor that requires grad "
                                 "is not functionalized")
        root = self._value_of(view._base)
        v = self._value_of(view)
        if root is None or v is None:
            raise mw.Unencodable("in-place update of a view made outside the graph")
        chain = []
        while v is not root:
            node = self.producers.get(v.vid)
            if node is None or node.op not in self._SCATTER or node.results[0] is not v:
                raise mw.Unencodable("in-place update of a view made by "
                                     f"{node.op if node else 'no recorded op'} is not "
                                     "functionalized")
            chain.append(node)
            v = node.operands[0]
        return chain

    def _scatter_into_base(self, view, chain, new_view):
        """Records the base of `view` after its update: each view op of
        `chain` scattered back (slice_scatter, select_scatter). Tensors that
        held a Value on the chain (the base, the views between) hold its new
        Value from now on; every other view of the base is stale (a read of
        one is refused, not given the old elements)."""
        old_view = self.producers[chain[0].results[0].vid].results[0] if chain else None
        renamed = {old_view.vid: new_view} if old_view is not None else {}
        value = new_view
        for node in chain:
            scatter = self._SCATTER[node.op]
            base = node.operands[0]
            if scatter is None:  # an alias: the same elements
                if tuple(value.shape) != tuple(base.shape):
                    raise mw.Unencodable("in-place update through an alias of another shape")
            else:
                name, func = scatter
                result = Value(self.current, base.shape, base.dtype)
                args = (base, value) + tuple(node.call[1][1:])
                scattered = Node(name, [base, value], dict(node.attrs), None, [result], False,
                                 (func, args, dict(node.call[2])), node.sizes)
                self.current.nodes.append(scattered)
                self.producers[result.vid] = scattered
                value = result
            renamed[base.vid] = value
        for table in (self.values, self.input_values):
            for key, v in list(table.items()):
                if v.vid in renamed:
                    self.values[key] = renamed[v.vid]
        stale, todo = set(), [chain[-1].operands[0].vid]
        while todo:
            for w in self.views_of.get(todo.pop(), ()):
                if w not in stale:
                    stale.add(w)
                    todo.append(w)
        self.stale_vids |= stale - set(renamed)
        # The view and the views between still alias the base: a later update
        # through another view of it makes them stale too.
        self.views_of.setdefault(value.vid, []).extend(
            v.vid for v in renamed.values() if v is not value)
        self.values[id(view._base)] = value
        self._bind(view._base)
        return value
