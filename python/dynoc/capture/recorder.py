"""Records the ATen calls of a capture region into graphs.

The Tracker is both the dispatcher observer (a TorchDispatchMode: it sees each
top-level ATen call, overload-exact, and runs it for real) and the listener of
dynoc's bytecode evaluator (lib/capture/evaluator.cpp), which tells it where
tensors came from, which Python values steered control flow (guards) and where
execution left the graph (graph breaks).
"""
import os
import re
import sys
import weakref
import opcode as _opcode

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import cuda_kernels as _cuda_kernels, data_loading as _data_loading, foreach as _foreach, guards as _guards, partition as _partition, repeats as _repeats
from .. import _logs
from . import mlir_writer as mw
from . import resume as _resume
from .. import _native
from .._errors import unsupported_type
from .collective_recording import CollectiveRecording
from .evaluator_hooks import EvaluatorHooks
from .guard_hooks import GuardHooks
from .loop_skip import BACKWARD_END, LoopSkipping
from .python_writes import _UNREAD, PythonWrites
from .view_updates import ViewUpdates
from .graph import Graph, Node, Value
from .tensor_ids import ForwardMemory, TensorIds
from .op_facts import (_MARKERS, _ESCAPES, _running_stats, _op_name, _is_tensor_list_type, _functional_variant, _arg_types, _INPLACE_VIEWS, _composite,
                       as_strided_unreadable)
from .results import Describer
from .size_operands import SizeOperands
from .values import _as_values, _tensors

# The break that opens a backward graph (not a break of the program).
_BACKWARD_PASS = "autograd backward pass: recorded as a backward graph"


class Tracker(PythonWrites, ViewUpdates, SizeOperands, GuardHooks, EvaluatorHooks,
              CollectiveRecording, LoopSkipping, TorchDispatchMode):
    """A region's capture: the evaluator's callbacks (EvaluatorHooks) and the
    dispatch mode that records the ATen calls they run into graphs."""
    records_graphs = True  # what capture/data_loading.py looks for
    _backward_pass_reason = _BACKWARD_PASS

    @classmethod
    def _should_skip_dynamo(cls):
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable, whose
        # first call imports Dynamo (a second per capture); no Dynamo runs here.
        return False

    def __init__(self, region, entry, params, user_inputs):
        super().__init__()
        _data_loading.install()
        # In process (jit/built.py): the backward pass dynoc runs itself after a
        # region whose result requires grad, to record its backward graph.
        self.synthetic_backward = False
        self.recorded_backward = False  # record_backward made a backward graph
        self.backward_breaks = []  # why record_backward's pass left its graph
        self.backward_error = None  # why record_backward failed, if it raised
        self.refused_break = False  # fullgraph=True raised at a break
        self.region = region
        self.entry = entry
        self.params = params  # id(tensor) -> (kind, name)
        self.graphs = []
        self.breaks = []
        # Where an op addressed storage (as_strided): a variant that breaks
        # hands eager code dense copies of its views, so it does not resume.
        self.storage_reads = []
        self.value_guards = {}
        self.hook_sources = []  # module trees whose hooks are guarded
        self.size_guards = {}  # guard text -> None, in the order decided
        self.computed_size_guards = {}  # the same, on sizes of computed tensors
        self.written = set()  # sources the region assigned (not guarded after)
        # source -> its value before the region's first write to it (or
        # _UNREAD): a write the region undoes before it returns is no side
        # effect (lasting_writes).
        self.written_before = {}
        self.written_after_breaks = {}  # source -> breaks before its first write
        self.constant_writes = set()  # sources last written a code literal
        self.size_writes = {}  # sources last written a tensor's size: its source
        # Writes into objects with no source: (id, key) -> (object, key,
        # is_attr, value before, breaks before); containers changed by their
        # methods (source -> method; id -> (container, method) when unnamed).
        self.anonymous_writes = {}
        self.anonymous_constants = set()  # those slots last written a code literal
        self.anonymous_sizes = {}  # those slots last written a tensor's size: its source
        self.anonymous_reads = {}  # (id, name) -> (type, value) of scalars read there
        self.producers = {}  # vid -> the Node that made the Value
        self.views_of = {}  # vid -> the vids of the views of it the graph made
        self.stale_vids = set()  # views whose base was updated through another view
        self._paths = None  # id -> source from the arguments (_argument_path)
        self.mutated_containers = {}
        self.container_calls = []  # [(source, or (id, type) until named; (method, args, kwargs))]
        self.anonymous_containers = {}
        self.unreplayable = []  # finish: why a side effect cannot be replayed
        # In process: keep what a break needs to be resumed after (capture/resume.py);
        # the ResumePoint of the first break, or why there is none.
        self.resumable = False
        self.resume_point = None
        self.region_code = None
        self.call_scope = None  # (L, G) of the region's call
        self.side_effects = []  # finish: [{"target": source, "value": description}]
        self.python_refs = []  # finish: what "python" descriptions index
        self.slice_sizes = {}  # id(slice) -> (slice, [(size, source)]) of its bounds
        self.sliced_tensors = set()  # ids of those slices a tensor subscript used
        self.static_reason = None  # why the variant may not merge into a dynamic one
        self.native_sizes = ()  # sizes the running native call was given
        self.operand_sizes = []  # [value, source, taken] of operators' size operands
        self.size_inputs = {}  # (id(graph), source) -> the graph's size input
        self.alignment_pads = set()  # ids of pad nodes a slice took back off
        self.native_stack = []
        # Maps keyed by id(tensor) forget a tensor when it dies (tensor_ids.py):
        # a long loop's capture does not hold every iteration's activations.
        self.tensor_ids = TensorIds()
        self.values = self.tensor_ids.map()  # id(tensor) -> Value (in whichever graph made it)
        self.sources = self.tensor_ids.map()  # id(tensor) -> source text from the evaluator
        self.user_inputs = user_inputs  # [(source, tensor)]
        self.constants = 0
        self.current = None
        self._escape_reported = False
        self.paused = 0            # inside a disable()d / disallowed call
        self.break_values = self.tensor_ids.map()  # id(tensor) -> name, made while paused
        # (id(tensor), id(graph)) -> (tensor, graph, input name): inputs a graph
        # changes in place, and the last value it gave each of them.
        self.mutated_inputs = {}
        self.mutation_values = {}
        self._backward_task = None  # the backward pass being recorded
        self.leaves = {}  # id -> (tensor, input name): leaves that require grad
        self.grad_names = {}  # id(leaf.grad) -> "<leaf>.grad", during a backward
        self.by_memory = ForwardMemory()  # a forward output's memory -> its Value
        self.fresh_empty = {}  # id -> tensor new_empty_strided made, not yet written
        self.gradient_seeds = {}  # vid of loss.backward()'s ones_like -> the loss Value
        self.optimizer_state = {}  # id -> tensor of an optimizer's state (a weight)
        self._backward_unrecorded = False  # the pass runs outside the graphs
        self.bound = self.tensor_ids.map()  # id(tensor) -> (dtype, shape, data_ptr) when its Value was bound
        # DYNOC_SAVE_EXAMPLES=1: each graph's user inputs (as first used) and
        # outputs (as each op made them) are written beside it, for checking a
        # build against the program's own values.
        self.examples = {} if os.environ.get("DYNOC_SAVE_EXAMPLES") else None
        self.result_tensors = {}
        self.input_values = self.tensor_ids.map()  # id(tensor) -> the current graph's input
        # A whole script's recording stops once its graphs hold this many ops
        # (`dynoc capture --max-ops`): a long loop's capture stays bounded.
        self.op_budget = getattr(region, "op_budget", None)
        self.ops_recorded = 0
        self.stopped = None  # why recording stopped, or None
        # A settled training loop's iterations counted, not recorded (whole
        # scripts only; capture/loop_skip.py).
        self._init_loop_skipping(getattr(region, "skip_settled_loops", False))
        self._new_graph()

    # --- graphs -------------------------------------------------------------
    def _new_graph(self):
        g = Graph(self.region.session.next_graph_name(), self.entry)
        if self._backward_task is not None:
            g.kind = "backward"
        self.graphs.append(g)
        self.current = g
        # Region inputs are inputs of whichever graph uses them first.
        self.input_values.clear()
        return g

    @staticmethod
    def _identity(t):
        try:
            return (t.dtype, tuple(t.shape), t.data_ptr())
        except RuntimeError:  # no storage to point at
            return (t.dtype, tuple(t.shape), None)

    def _bind(self, t):
        self.bound[id(t)] = self._identity(t)

    def _forget_if_swapped(self, t):
        """A tensor whose data was swapped outside the dispatcher (`p.data =
        q`, as Module.to/.double() do) is not the value recorded for it: later
        uses lift it afresh."""
        key = id(t)
        was = self.bound.get(key)
        if was is not None and was != self._identity(t):
            self.values.pop(key, None)
            self.input_values.pop(key, None)
            del self.bound[key]

    def _value_of(self, t):
        """The current graph's Value for tensor `t`, or None (no lifting)."""
        self._forget_if_swapped(t)
        v = self.values.get(id(t))
        if v is not None and v.graph is self.current:
            return v
        return self.input_values.get(id(t))

    def _lift(self, t):
        """The Value for tensor `t` in the current graph, adding an input if the
        graph did not make it."""
        key = id(t)
        self._refuse_stale(t)
        if key in self.fresh_empty:
            raise mw.Unencodable("reads memory new_empty_strided left uninitialized")
        self._forget_if_swapped(t)
        v = self.values.get(key)
        g = self.current
        if v is not None and v.graph is g:
            return v
        if key in self.input_values:
            return self.input_values[key]
        if v is None and g.kind == "backward" and key not in self.params:
            v = self._saved_value(t)
        if v is not None and g.kind == "backward" and v.vid in self.gradient_seeds:
            of = self.gradient_seeds[v.vid]
            if of.kind == "user" and re.fullmatch(r"graph_\d+\.output_\d+", of.name or ""):
                # The loss came across a break (`print(loss.item())` before
                # `loss.backward()`): the gradient of the forward's output.
                nv = g.add_input(t.shape, t.dtype, "user", f"grad({of.name})")
            else:
                nv = g.add_input(t.shape, t.dtype, "user",
                                 f"grad({of.graph.name}.output_{of.graph.add_output(of)})")
        elif v is not None:  # made by an earlier graph: flows in across the break
            out_idx = v.graph.add_output(v, saved=g.kind == "backward" and v.graph.kind == "forward")
            nv = g.add_input(t.shape, t.dtype, "user", f"{v.graph.name}.output_{out_idx}")
        elif key in self.grad_names:  # a leaf's gradient, accumulated into
            nv = g.add_input(t.shape, t.dtype, "user", self.grad_names[key])
        elif key in self.break_values:  # made outside the graphs, at a break
            nv = g.add_input(t.shape, t.dtype, "user", self.break_values[key])
        elif key in self.params:
            kind, name = self.params[key]
            nv = g.add_input(t.shape, t.dtype, kind, name)
        else:
            src = self.sources.get(key) or next((s for s, u in self.user_inputs if u is t), None)
            if src is None:
                src = self._argument_path(t)
            if src is not None and self._held_by_argument(src) and \
                    not (t.requires_grad and t.is_leaf) and key not in self.optimizer_state \
                    and not any(u is t for _, u in self.user_inputs):
                # A tensor an argument holds (a dict's item, a cache object's
                # attribute): an input of the graph, as the argument itself.
                self.user_inputs.append((src, t))
            if src is not None and any(u is t for _, u in self.user_inputs):
                nv = g.add_input(t.shape, t.dtype, "user", src)
                self._tensor_guard(len(g.inputs) - 1, src, t)
            elif (t.requires_grad and t.is_leaf) or key in self.optimizer_state:
                # Trained state (a parameter reached through a global, an
                # optimizer's moments): one weight under one name in every
                # graph, forward, backward and update, that the update writes.
                self.constants += 1
                kind = "buffer" if key in self.optimizer_state else "parameter"
                name = self.region.session.add_weight(src or f"_{kind}_{self.constants}", t)
                nv = g.add_input(t.shape, t.dtype, kind, name)
            else:
                self.constants += 1
                # Session-unique: variants of a region share one weights file.
                name = self.region.session.add_constant(
                    src or f"_constant_{self.constants}", t)
                nv = g.add_input(t.shape, t.dtype, "constant", name)
        self.input_values[key] = nv
        if t.requires_grad and t.is_leaf and nv.kind is not None and \
                not nv.name.startswith("graph_"):
            self.leaves.setdefault(key, (t, nv.name))
        self._bind(t)
        if self.examples is not None:
            # Weights too: the script may change them after this graph ran (an
            # optimizer step), and the weights file holds their last values.
            self.examples[nv.vid] = t.detach().clone()
        self.tensor_ids.track(t)
        return nv

    @staticmethod
    def _tensor_guard_text(src, t, sizes=None, strides=None):
        sizes = list(t.shape) if sizes is None else sizes
        strides = list(t.stride()) if strides is None else strides
        return (f"check_tensor({src}, {t.dtype}, device='{t.device.type}', "
                f"requires_grad={t.requires_grad}, size={sizes}, stride={strides})")

    def region_guards(self):
        """What a later call must match to reuse this capture: every tensor
        argument, the global state and every Python value the region read,
        whether or not a graph came out of it."""
        out = [{"kind": "tensor_match", "text": self._tensor_guard_text(src, t), "source": src,
                "dtype": t.dtype, "device": t.device.type, "requires_grad": t.requires_grad,
                "sizes": list(t.shape), "strides": list(t.stride())}
               for src, t in self.user_inputs]
        out += self._global_state_guards()
        out += [{"kind": "value", "text": text} for text in self.value_guards.values()]
        out += [{"kind": "size", "text": text} for text in self.size_guards]
        return out

    @staticmethod
    def _global_state_guards():
        return [{"kind": "global_state", "text": f"___is_grad_enabled() == {torch.is_grad_enabled()}"},
                {"kind": "global_state",
                 "text": f"torch.get_default_dtype() == {torch.get_default_dtype()}"}]

    def _tensor_guard(self, input_index, src, t):
        text = self._tensor_guard_text(src, t)
        self.current.guards.append({
            "kind": "tensor_match", "input": input_index, "text": text, "source": src,
            "dtype": t.dtype, "sizes": list(t.shape), "strides": list(t.stride()),
            "requires_grad": t.requires_grad, "device": t.device.type})

    # --- dispatcher observer -----------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.skipping:
            return self._dispatch_skipped(func, args, kwargs)
        if self.op_budget and self.ops_recorded >= 2 * self.op_budget and not self.paused \
                and self._backward_task is None:
            self._stop_recording()  # no break came for a while: stopped mid-graph
        task = torch._C._current_graph_task_id()
        if task != -1 and not self.paused:  # the autograd engine runs a backward pass
            self._enter_backward(task)
            if self._backward_unrecorded:
                out = func(*args, **kwargs)
                for t in _tensors(out):
                    self.values.pop(id(t), None)
                    self.break_values[id(t)] = "gradient (autograd backward, not recorded)"
                    self.tensor_ids.track(t)
                return out
        elif self._backward_task is not None and not self.paused:
            self._end_backward()
            if self.skipping:  # the loop settled at that pass's end
                return self._dispatch_skipped(func, args, kwargs)
        self._note_op(func, args)
        if not self.paused and func in _INPLACE_VIEWS() and self._made_here(args[0]):
            return self._record_inplace_view(func, args, kwargs)
        if not self.paused and _composite(func):
            # Under torch.inference_mode() the autograd keys that run a
            # composite op's decomposition are off, so the op itself arrives
            # here (aten.linear, aten.layer_norm, aten.scaled_dot_product_
            # attention): decomposed as the autograd path would, with this
            # mode on again to record its parts, the graph is no_grad's.
            self._nested += 1
            try:
                with self:
                    out = func.decompose(*args, **kwargs)
            finally:
                self._nested -= 1
            if out is not NotImplemented:
                return out
        per_tensor = None if self.paused else _foreach.per_tensor(func)
        if per_tensor is not None:  # a list's op, recorded element by element
            self._nested += 1
            try:
                with self:
                    return _foreach.run(func, per_tensor, args, kwargs)
            finally:
                self._nested -= 1
        if not self.paused and func._schema.is_mutable and args and \
                isinstance(args[0], torch.Tensor) and id(args[0]) not in self.fresh_empty and \
                self._value_of(args[0]) is None:
            self._lift(args[0])  # an input about to change: lifted as it was
        stats = None if self.paused else _running_stats(func, args, kwargs)
        before = None
        if stats:  # inputs about to change: lifted (and saved) as they were
            for t in stats[1]:
                if self._value_of(t) is None:
                    self._lift(t)
            before = [t.clone() for t in stats[1]]
        out = func(*args, **kwargs)
        if self.paused:
            return out
        name = func._schema.name
        if name.split("::", 1)[-1] in _MARKERS:
            return out
        if name in _ESCAPES:
            if self._escape_reported:
                self._escape_reported = False  # the evaluator already broke here
            else:
                self.on_break(_ESCAPES[name], None, None, False, args[0] if args else None)
            return out
        if name == "aten::new_empty_strided":
            # AccumulateGrad's layout fix: new_empty_strided, then copy_ of the
            # gradient into it. Graph values have no layout: the copy is the
            # gradient's own Value (below), the empty tensor no op.
            self.fresh_empty[id(out)] = out
            return out
        if name == "aten::copy_" and id(args[0]) in self.fresh_empty and \
                isinstance(args[1], torch.Tensor) and args[1].dtype == out.dtype and \
                args[1].shape == out.shape:
            del self.fresh_empty[id(args[0])]
            self.values[id(out)] = self._lift(args[1])
            self._bind(out)
            self.tensor_ids.track(out)
            return out
        if name.startswith(("_c10d_functional::", "c10d::")):
            try:
                self._record_collective(func, args, kwargs, out)
            except mw.Unencodable as e:
                self._run_outside(func, args, kwargs, out, str(e))
            return out
        try:
            self._record(func, args, kwargs, out)
            if stats:
                self._record_running_stats(stats, before, out)
        except mw.Unencodable as e:
            self._run_outside(func, args, kwargs, out, str(e))
        return out

    def _made_here(self, t):
        """Is `t` a value the current graph computed (not an input, weight or
        constant, whose change the caller would see)?"""
        v = self._value_of(t) if isinstance(t, torch.Tensor) else None
        return v is not None and v.kind is None

    def _record_inplace_view(self, func, args, kwargs):
        """An in-place metadata op on a value the graph computed (`q.t_()`,
        as nn.init.orthogonal_ does): recorded as its view op on the tensor as
        it was (whose shape the op is about to change), and the tensor stands
        for that view's value from then on. (On an input the caller would see
        the change: that stays the general path's.)"""
        functional = _INPLACE_VIEWS()[func]
        view = functional(*args, **kwargs)
        try:
            self._record(functional, args, kwargs, view)
        except mw.Unencodable as e:
            self._run_outside(functional, args, kwargs, view, str(e))
        out = func(*args, **kwargs)
        value = self.values.get(id(view))
        if value is not None:
            self.values[id(out)] = value
            self._bind(out)
            self.tensor_ids.track(out)
        return out

    def _mark_mutated(self, target):
        """`target` is about to change in place. An input of the current graph
        is then one of its mutated inputs (written back by the caller); a
        constant becomes state, a buffer: one weight under one name in every
        graph and variant (a BatchNorm's running statistics, a counter)."""
        cur = self._value_of(target)
        if cur is not None and cur.kind is None:
            return  # made by this graph: a value, no write-back
        v = self._lift(target)
        if v.kind == "constant":
            session = self.region.session
            session.weights.pop(v.name, None)  # the name this lift took
            v.kind = "buffer"
            v.name = session.add_weight(self.sources.get(id(target)) or v.name, target)
        self.mutated_inputs.setdefault((id(target), id(self.current)),
                                       (target, self.current, v.name))

    def _record_running_stats(self, stats, before, out):
        """native_batch_norm in training mode also updates the running mean
        and variance in place, though its schema does not say so (torch's
        functionalization has _native_batch_norm_legit_functional for that):
        recorded as the functional update ATen computes, rm' = rm (1 - m) +
        mean m and rv' = rv (1 - m) + var m with the batch's unbiased
        variance, and rm, rv as mutated inputs of the graph (written back)."""
        aten = torch.ops.aten
        (x, momentum), (rm, rv) = stats
        dims = [d for d in range(x.dim()) if d != 1]
        var = aten.var.correction(x, dims, correction=1)
        self._record(aten.var.correction, (x, dims), {"correction": 1}, var)
        for stat, old, batch in ((rm, before[0], out[1]), (rv, before[1], var)):
            self._mark_mutated(stat)
            # `stat` holds the new value already; its Value is still the old
            # one, which the first two ops read (computed here from `old`).
            kept = aten.mul.Scalar(old, 1 - momentum)
            self._record(aten.mul.Scalar, (stat, 1 - momentum), {}, kept)
            added = aten.mul.Scalar(batch, momentum)
            self._record(aten.mul.Scalar, (batch, momentum), {}, added)
            self._record(aten.add.Tensor, (kept, added), {}, stat)
            self.mutation_values[(id(stat), id(self.current))] = self.values[id(stat)]

    def _enter_backward(self, task):
        """An op of a backward pass (loss.backward(), torch.autograd.grad).
        The first one of a pass ends the forward graph (a break at the user's
        line, as Dynamo breaks there) and opens a backward graph: the engine's
        ops are recorded as they run, reading the forward values autograd
        saved (forward outputs, `graph_N.output_K`), and the gradients it
        leaves in leaves' `.grad` become its outputs (docs/training.md)."""
        if task == self._backward_task:
            return
        if self._backward_task is not None:
            self._end_backward()
        # What the backward starts from (the loss) is read outside the
        # graphs: the values no op of the graph consumed are its outputs,
        # so the forward that made them is not dropped as unused.
        g = self.current
        self._mark_gradient_seeds(g)
        used = {v.vid for n in g.nodes for v in n.operands}
        for n in g.nodes:
            for r in n.results:
                if r.vid not in used and r.shape != (0,) and r.vid not in self.gradient_seeds:
                    g.add_output(r)
        # Gradients accumulated into (`.grad` already set): inputs of the
        # backward graph, named after their leaf, changed in place.
        self.grad_names = {id(t.grad): f"{name}.grad" for t, name in self.leaves.values()
                           if t.grad is not None}
        self._backward_task = task  # graphs opened from here on are backward ones
        # create_graph=True: the pass itself is differentiable (double
        # backward), which a backward graph does not express; it runs outside
        # the graphs and its gradients enter later graphs as named inputs.
        self._backward_unrecorded = torch.is_grad_enabled()
        if self._backward_unrecorded:
            self.on_break("autograd backward pass with create_graph=True (double backward): "
                          "runs outside the graphs, not recorded", None, None)
            return
        self.on_break(_BACKWARD_PASS, None, None)
        self.current.kind = "backward"  # the graph on_break opened (or the empty one)

    def _mark_gradient_seeds(self, g):
        """loss.backward() seeds the pass with ones_like(loss), made just
        before it (torch.autograd's _make_grads): the backward graph takes
        that seed as an input, `grad(graph_N.output_K)` (the gradient of
        that forward output), rather than reading it from the forward, so a
        runtime feeds output gradients to a backward graph as AOTAutograd's
        backward takes them."""
        tail = len(g.nodes)
        while tail and g.nodes[tail - 1].op in ("aten.ones_like", "aten.detach", "aten.alias"):
            tail -= 1
        seeds = {}
        for n in g.nodes[tail:]:
            if n.op == "aten.ones_like" and len(n.operands) == 1:
                seeds[n.results[0].vid] = n.operands[0]
            elif n.operands and n.operands[0].vid in seeds:
                seeds[n.results[0].vid] = seeds[n.operands[0].vid]
        self.gradient_seeds = seeds

    def record_backward(self, result):
        """In process: records the backward graph of the region's result (the
        tensors of it that require grad) by running autograd over it with
        ones as their gradients, as AOTAutograd traces a backward at the
        first call. The leaves' `.grad` are left as they were, the autograd
        graph is kept for the program's own backward, and the pass is not a
        break of the program. Returns whether a backward graph came out."""
        outs = [t for t in _tensors(result) if t.requires_grad]
        leaves = [t for t, _ in self.leaves.values()]
        if not outs or not leaves:
            return False
        held = [(t, t.grad) for t in leaves]
        breaks = len(self.breaks)
        self.synthetic_backward = True
        try:
            for t in leaves:
                t.grad = None
            torch.autograd.backward(outs, [torch.ones_like(o) for o in outs],
                                    retain_graph=True)
            if self._backward_task is not None:
                self._end_backward()
        finally:
            for t, g in held:
                t.grad = g
            self.synthetic_backward = False
            # Not breaks of the program; kept to say why a gradient is missing.
            self.backward_breaks = [b["reason"] for b in self.breaks[breaks:]
                                    if not b["reason"].startswith(_BACKWARD_PASS)]
            del self.breaks[breaks:]
        return any(g.kind == "backward" and g.grads for g in self.graphs)

    def _end_backward(self):
        """The backward pass is over: each leaf whose `.grad` the pass set
        or accumulated gets that gradient as an output of the backward graph
        that made it; later ops record into a new forward graph."""
        self._backward_task = None
        if self._backward_unrecorded:
            self._backward_unrecorded = False
            self.current.kind = "forward"  # on_break opened it: no backward op went in
            self._note_boundary(BACKWARD_END)
            return
        for t, name in self.leaves.values():
            v = self.values.get(id(t.grad)) if t.grad is not None else None
            if v is not None and v.graph.kind == "backward":
                v.graph.grads.append({"input": name, "output": v.graph.add_output(v)})
        self.grad_names = {}
        self.by_memory.backward_ended()
        self._note_boundary(BACKWARD_END)
        self._new_graph()
        self._check_budget()

    def _saved_value(self, t):
        """The forward Value a tensor the backward reads stands for: autograd
        unpacks a saved forward output as a new tensor object over the same
        memory, so it is matched by dtype, shape, strides and address."""
        v = self.by_memory.get(t)
        return v if v is not None and v.graph.kind == "forward" else None

    def _run_outside(self, func, args, kwargs, out, why):
        """`func` ran but no graph can hold it: the graph ends here. What it
        consumed leaves the graphs as outputs (so the ops that made it stay
        recorded), and what it made or changed enters later graphs as inputs
        named after it."""
        for t in _tensors((args, kwargs)):
            v = self.values.get(id(t))
            if v is not None:
                v.graph.add_output(v)
        self.current.ran_outside.append(f"{_op_name(func)}: {why}")
        self.on_break(f"{_op_name(func)}: {why}", None, None)
        made = _tensors(out)
        if func._schema.is_mutable and args and isinstance(args[0], torch.Tensor):
            made = [args[0]] + [t for t in made if t is not args[0]]
        for i, t in enumerate(made):
            self.values.pop(id(t), None)
            self.break_values[id(t)] = f"result of {_op_name(func)}" + \
                (f"[{i}]" if len(made) > 1 else "")
            self.tensor_ids.track(t)

    def _record(self, func, args, kwargs, out):
        # In-place ops are recorded functionally: `x.add_(y)` becomes
        # `x' = add(x, y)` and later uses of x read x'. A mutated region input
        # is written back by the caller (the graph's "mutations").
        replay = None
        kept = ()  # kernel outputs that stand for results: (tensor, index)
        kernel = _cuda_kernels.as_graph_op(func, args, kwargs)
        if kernel:  # the call replays as it ran; the graph gets the dialect's op
            replay = (func, args, kwargs)
            func, args, kwargs, results_of, kept_of = kernel
            kept = kept_of(out)
            standing = {id(t) for t, _ in kept}
            for t in _tensors(out)[1:]:  # read by its backward only
                if id(t) not in standing:
                    self.break_values[id(t)] = f"an output of {_op_name(replay[0])}"
                self.tensor_ids.track(t)
            out = results_of(out)
        recorded = recorded_from = func
        view_chain = None  # an in-place update of a view: the views to its base
        if func is torch.ops.aten.as_strided.default:
            self.storage_reads.append(self.region.session.user_location())
            why = as_strided_unreadable(args, kwargs)
            if why:
                raise mw.Unencodable(why)
        if not func._schema.is_mutable:
            mw.check_op(_op_name(func))
        else:
            recorded = _functional_variant(func)
            target = args[0] if args else None
            if recorded is None or not isinstance(target, torch.Tensor):
                raise mw.Unencodable("in-place op without a functional form")
            mw.check_op(_op_name(recorded))
            # Defaults of the in-place schema the twin may lack (bernoulli_'s
            # p=0.5; bernoulli.p has none): spelled out for the twin.
            positional = [a for a in func._schema.arguments if not a.kwarg_only]
            args = tuple(args) + tuple(a.default_value for a in positional[len(args):]
                                       if a.has_default_value() and a.name not in kwargs)
            if target._base is not None:
                view_chain = self._view_chain(target)
                self._mark_mutated(target._base)
            else:
                self._mark_mutated(target)
        func = recorded
        schema = func._schema
        operands, attrs, segments, flexible = [], {}, [], 0
        for i, (a, t) in enumerate(zip(schema.arguments, _arg_types(func))):
            if not a.kwarg_only and i < len(args):
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif t.startswith("Tensor"):
                v = None
            else:
                continue  # the attribute's default applies
            if "Generator" in t:
                continue
            if t.startswith("Tensor") and "[]" not in t:
                optional = t.endswith("?")
                if optional:
                    flexible += 1
                if v is None:
                    segments.append(0)
                    continue
                if not isinstance(v, torch.Tensor):
                    size = self._size_operand(v)
                    if size is not None:  # `x + n.size(0)`: an input
                        operands.append(size)
                        segments.append(1)
                        continue
                    # A Python number in a Tensor slot (`x * 2`): a 0-d constant.
                    v = torch.tensor(v)
                operands.append(self._lift(v))
                segments.append(1)
            elif _is_tensor_list_type(t):
                flexible += 1
                vals = list(v or [])
                present = [x for x in vals if x is not None]
                operands.extend(self._lift(x) for x in present)
                segments.append(len(present))
                if len(present) != len(vals):
                    attrs[mw.attr_name(a.name + "_none")] = mw.encode_attr(
                        "int[]", [k for k, x in enumerate(vals) if x is None])
            else:
                if v is None:
                    continue
                attrs[mw.attr_name(a.name)] = mw.encode_attr(t, v)
        unpadded = self._unpadded(func, operands, args, kwargs)
        if unpadded is not None:
            self.values[id(out)] = unpadded
            self._bind(out)
            self.tensor_ids.track(out)
            return
        # The call, replayable: tensors by their Values (all lifted by now).
        func_, args_, kwargs_ = replay or (func, args, kwargs)
        call = (func_, _as_values(args_, self._value_of), _as_values(kwargs_, self._value_of))
        outs = out if isinstance(out, (tuple, list)) else (out,)
        results = []
        for o in outs:
            if o is None and len(outs) > 1:
                # An undefined tensor (mkldnn_rnn_layer's workspace outside
                # training): a 0-element placeholder no op can read.
                results.append(Value(self.current, (0,), torch.uint8))
                continue
            if not isinstance(o, torch.Tensor):
                raise mw.Unencodable(f"non-tensor result {type(o).__name__}")
            mw.element_type(o.dtype)
            v = Value(self.current, o.shape, o.dtype)
            results.append(v)
        for t, index in kept:
            self.values[id(t)] = results[index]
            self.tensor_ids.track(t)
        for o, v in zip(outs, results):
            if o is None:
                continue
            self.values[id(o)] = v
            self._bind(o)
            self.tensor_ids.track(o)
            if self.examples is not None:
                # as it is now: a later in-place op may change the tensor
                self.result_tensors[v.vid] = o.detach().clone()
        self._remember_saved(args, kwargs, outs)
        node = Node(_op_name(func), operands, attrs, segments if flexible > 1 else None,
                    results, False, call, tuple(self.native_sizes))
        self.current.nodes.append(node)
        self.ops_recorded += 1
        for r in results:
            self.producers[r.vid] = node
        returns = func._schema.returns
        if operands and returns and returns[0].alias_info is not None and \
                not returns[0].alias_info.is_write:  # a view of operand 0
            self.views_of.setdefault(operands[0].vid, []).extend(r.vid for r in results)
        if view_chain is not None:
            base = self._scatter_into_base(args[0], view_chain, results[0])
            self.mutation_values[(id(args[0]._base), id(self.current))] = base
        elif func is not recorded_from:  # an in-place op: its input's new value
            self.mutation_values[(id(args[0]), id(self.current))] = results[0]

    def _remember_saved(self, args, kwargs, outs):
        """An op autograd recorded may save any of its tensors for the
        backward pass, which finds them by their memory."""
        if self.current.kind != "forward" or not any(
                isinstance(o, torch.Tensor) and o.requires_grad for o in outs):
            return
        for t in _tensors((args, kwargs)) + [o for o in outs if o is not None]:
            v = self.values.get(id(t))
            if v is not None and v.kind is None and v.graph.kind == "forward" \
                    and t.device.type != "meta":
                self.by_memory.add(t, v)

    # --- evaluator listener ------------------------------------------------
    def enter_native(self, sizes, opaque):
        """The evaluator runs a call natively that was given tensor sizes
        (list of (int, source)), or that is Python code (opaque: it may read
        sizes unseen). The ATen nodes it records carry that (capture/dynamic.py)."""
        self.native_stack.append(self.native_sizes)
        self.native_sizes = tuple(sizes) + ((None, "<opaque>"),) * bool(opaque)

    def on_slice_sizes(self, sl, sizes):
        """A slice whose bounds are tensor sizes ([(value, source)]): a
        tensor subscript passes them to its ATen calls; a slice never used
        on a tensor pins them (finish)."""
        self.slice_sizes[id(sl)] = (sl, list(sizes))

    def enter_subscript(self, key):
        """A tensor subscript with `key` begins: the sizes its slices hold
        are the sizes its ATen calls were given."""
        sizes = []
        for k in key if isinstance(key, tuple) else (key,):
            entry = self.slice_sizes.get(id(k)) if isinstance(k, slice) else None
            if entry is not None and entry[0] is k:
                sizes += entry[1]
                self.sliced_tensors.add(id(k))
        self.enter_native(sizes, False)

    def exit_native(self):
        self.native_sizes = self.native_stack.pop() if self.native_stack else ()

    def on_tensor(self, tensor, source):
        if id(tensor) not in self.sources:
            self.sources[id(tensor)] = source
            self.tensor_ids.track(tensor)

    def value_source(self, tensor):
        """How a size source names a tensor whose shadow lost its source: a
        region input by its source (`L['x']`, when it reached here through
        a path the evaluator did not name), a tensor a graph computed by its
        Value (`___v[12]`); None for tensors made elsewhere."""
        v = self.values.get(id(tensor))
        if v is not None:
            return f"___v[{v.vid}]"
        src = next((src for src, t in self.user_inputs if t is tensor), None)
        return src if src is not None else self._argument_path(tensor)

    def pause(self, args=()):
        """A call runs outside the graphs (disable(), disallow_in_graph); the
        graph values it receives leave the graph: they become outputs."""
        for t in _tensors(args):
            v = self.values.get(id(t))
            if v is not None:
                v.graph.add_output(v)
        self.paused += 1

    def resume(self, result, name):
        """The paused call returned `result`; its tensors are named inputs of
        the graphs that use them."""
        self.paused -= 1
        flat = _tensors(result)
        for i, t in enumerate(flat):
            self.break_values[id(t)] = name if len(flat) == 1 else f"{name}[{i}]"
            self.values.pop(id(t), None)
            self.tensor_ids.track(t)

    def on_break(self, reason, filename, lineno, escape=False, value=None):
        if self.stopped:
            return
        # A break where a tensor becomes a Python value (reported by the
        # evaluator) is followed by the dispatcher's conversion, which must not
        # count twice.
        self._escape_reported = bool(escape)
        if self.skipping:  # a settled loop's break: counted, not recorded
            where = f"{filename}:{lineno}" if filename else self.region.session.user_location()
            self.breaks.append({"reason": reason, "location": where})
            self._skipped_boundary(f"{where}: {reason}")
            return
        if isinstance(value, torch.Tensor):  # its value leaves: an output
            v = self.values.get(id(value))
            if v is not None:
                v.graph.add_output(v)
        where = f"{filename}:{lineno}" if filename else self.region.session.user_location()
        self._refuse_break(where, reason)
        self._note_resume_point()
        self.breaks.append({"reason": reason, "location": where})
        if not self.synthetic_backward and not self.region.internal:
            _logs.log("graph_breaks", f"graph break at {where}: {reason}")
        self._note_boundary(f"{where}: {reason}")
        if self.current.nodes:
            self._new_graph()
        self._check_budget()

    def _check_budget(self):
        """At a graph's end: stops recording once the graphs hold the
        budget's ops (a backward pass is recorded to its end first)."""
        if self.op_budget and self.ops_recorded >= self.op_budget and not self.stopped \
                and self._backward_task is None:
            self._stop_recording()

    def _stop_recording(self):
        """The rest of the region runs unrecorded (as inside a disable()d
        call, for good): the graphs recorded so far are the capture."""
        where = self.region.session.user_location()
        self.stopped = (f"recording stopped after {self.ops_recorded} recorded ops, the "
                        f"capture's budget (dynoc capture --max-ops {self.op_budget}); the "
                        "rest of the script ran unrecorded")
        self.breaks.append({"reason": self.stopped, "location": where})
        # Said now too: the report comes only when the script ends.
        sys.stderr.write(f"[dynoc capture] {where}: {self.stopped}\n")
        if self.current.nodes:
            self._new_graph()
        self.paused += 1
        self.by_memory.clear()

    def call_mark(self):
        """(graph, node count) as the region function starts a call: the
        evaluator keeps it in case a break under the call is resumed."""
        return (self.current, len(self.current.nodes)) if self.current is not None else None

    def _note_resume_point(self):
        """In process, at the region's first break: where compiled calls
        resume (capture/resume.py), or why they cannot."""
        if not self.resumable or self.breaks or self.synthetic_backward:
            return
        try:
            self.resume_point = _resume.at_break(self, _native.ext().break_snapshot())
        except _resume.NotResumable as e:
            self.resume_point = str(e)

    def _refuse_break(self, where, reason):
        """fullgraph=True: the break raises Unsupported before the breaking
        instruction runs (the evaluator stops there)."""
        if self.region.fullgraph and not self.synthetic_backward:
            self.refused_break = True
            raise unsupported_type()(f"dynoc: fullgraph=True but the region breaks at "
                                     f"{where}: {reason}")

    def on_skip_frame(self, code, reason, bad_opcode):
        what = reason
        if bad_opcode >= 0:
            what = f"opcode {_opcode.opname[bad_opcode]}"
        self._refuse_break(f"{code.co_filename}:{code.co_firstlineno}",
                           f"frame '{code.co_name}' not interpreted ({what})")
        self._note_resume_point()
        self.breaks.append({
            "reason": f"frame '{code.co_name}' not interpreted ({what}); it ran natively and "
                      "its ATen calls were recorded without source information",
            "location": f"{code.co_filename}:{code.co_firstlineno}"})
        _logs.log("graph_breaks", f"graph break at {self.breaks[-1]['location']}: "
                                  f"{self.breaks[-1]['reason']}")

    # --- finishing ---------------------------------------------------------
    def finish(self, result, live=()):
        """Sets the output structure from the region's result; drops empty graphs.
        `live`: tensors that outlive the region besides its result (a whole
        script's globals); the graphs that made them output them."""
        if self._backward_task is not None:
            self._end_backward()
        # The region's result is the last graph's; one left empty by a break
        # or a backward pass at the end gives way to the last one with ops.
        last = next((g for g in reversed(self.graphs) if g.nodes), self.current)
        for t in _tensors(list(live)):
            v = self.values.get(id(t))
            if v is not None:
                v.graph.add_output(v)

        def graph_value(obj):
            v = self.values.get(id(obj))
            return None if v is None else (v.graph.name, v.graph.add_output(v))
        L = self.call_scope[0] if self.call_scope is not None else {}
        describe = Describer(graph_value, self.user_inputs,
                             [(f"L[{k!r}]", v) for k, v in L.items()])

        # Each graph writes back the last value it gave each input it changed.
        for key, (t, g, name) in self.mutated_inputs.items():
            v = self.mutation_values.get(key)
            if v is not None and v.graph is g:
                g.mutations.append({"input": name, "output": g.add_output(v)})
                g.mutated_tensors.append(weakref.ref(t))
        s = describe(result)
        # The writes that last, with their values now: replayed in process
        # after the built graph (jit/side_effects.py); None: not readable.
        self._name_anonymous_writes()
        self.side_effects = []
        for src in self.lasting_writes():
            value = self._source_value(src)
            self.side_effects.append({"target": src, "value": None if value is _UNREAD
                                      else describe(value),
                                      "constant": src in self.constant_writes,
                                      "size": self.size_writes.get(src)})
            if src in self.size_writes and self.static_reason is None:
                # replayed as the value it has now: right while sizes are static
                self.static_reason = (f"it writes {src} = {self.size_writes[src]}, a size, "
                                      "into a Python object")
        self._describe_container_calls(describe)
        self.python_refs = describe.refs
        for g in self.graphs:
            g.output_structure = s if g is last else {"type": "intermediate"}
        for vid, forward_input in _partition.partition(self.graphs).items():
            if self.examples is not None and forward_input.vid in self.examples:
                self.examples[vid] = self.examples[forward_input.vid]
        for key, (sl, sizes) in self.slice_sizes.items():
            if key not in self.sliced_tensors:  # sliced a list, say: pinned
                for value, source in sizes:
                    self.on_guard(source, value)
        for g in self.graphs:
            # Every node as recorded: a size Python read may belong to a
            # value nothing else uses (capture/symbolic.py, capture/dynamic.py replay it).
            g.recorded_nodes = list(g.nodes)
            g.eliminate_dead_nodes()
            if self.alignment_pads:  # a replay at other sizes would pin their amounts
                live = set(map(id, g.nodes))
                g.recorded_nodes = [n for n in g.recorded_nodes
                                    if id(n) not in self.alignment_pads or id(n) in live]
            g.order_inputs()
            if self.examples is not None:
                ins = [self.examples.get(v.vid) for v in g.inputs if v.kind == "user"]
                outs = [self.result_tensors.get(v.vid) for v in g.outputs]
                if all(x is not None for x in ins + outs):
                    g.examples = {**{f"input_{i}": x for i, x in enumerate(ins)},
                                  **{f"output_{i}": x.detach().clone() for i, x in enumerate(outs)}}
                    g.examples.update({f"weight.{v.name}": self.examples[v.vid]
                                       for v in g.inputs if v.kind != "user"
                                       and v.vid in self.examples})
            g.guards.extend(self._global_state_guards())
            for text in self.value_guards.values():
                g.guards.append({"kind": "value", "text": text})
            inputs = {gd["source"]: gd["input"] for gd in g.guards if gd["kind"] == "tensor_match"}
            for text in self.size_guards:
                fields = _guards.size_guard_fields(text, inputs)
                # A guard on tensors the graph does not take is checked at
                # capture time only, as value guards are.
                g.guards.append({"kind": "size", "text": text, **fields} if fields
                                else {"kind": "value", "text": text})
        self.graphs = _repeats.fold([g for g in self.graphs if g.nodes], self.region.session.weights)
        self.tensor_ids.clear()
        self.by_memory.clear()
        return self.graphs
