"""What dynoc's bytecode evaluator (lib/capture/evaluator*.cpp) calls on a
region's tracker, by name, while it runs the region: one declared protocol
(as torch-mlir's FxImporterHooks), so the C++ side and the Python side name
the same methods. capture/recorder.py's Tracker implements it;
test/capture/test_evaluator_hooks.py checks that the names the C++ sources
call are exactly these.

Sources are Python expressions over the region's arguments L and globals G
(`L['x'].size()[0]`, `G['cfg'].eps`); guards are texts over them.
"""


class EvaluatorHooks:
    """The callbacks of one region's capture. Every method is called with
    the evaluator's frame suspended; an exception it raises propagates into
    the user's program as if the bytecode had raised it."""

    # Read once at the region's start: whether the evaluator keeps the frame's
    # state at calls and tensor branches so a break there can be resumed in
    # process (break_snapshot, capture/resume.py).
    resumable = False

    # --- values the region reads and writes -------------------------------

    def on_tensor(self, tensor, source):
        """A tensor was read from `source` (an argument, an attribute, a
        global): the graph names it by that source."""
        raise NotImplementedError

    def on_guard(self, source, value):
        """Python decided on the value at `source` (a constant folded into the
        graph): guard it."""
        raise NotImplementedError

    def on_guard_none(self, source, is_none):
        """Python tested `source is None` (or `is not None`)."""
        raise NotImplementedError

    def on_type_guard(self, source, obj):
        """A match statement tested the type of `obj` at `source`."""
        raise NotImplementedError

    def on_key_guard(self, source, key, present):
        """A mapping pattern looked `key` up in the mapping at `source`."""
        raise NotImplementedError

    def on_size_guard(self, text):
        """Python decided on tensor sizes (`L['x'].size()[0] > 4`)."""
        raise NotImplementedError

    def value_source(self, tensor):
        """The source a size expression names `tensor` by when the evaluator
        lost it (`L['x']`, or `___v[12]` for a value a graph computed), or
        None."""
        raise NotImplementedError

    def on_store(self, source, constant=False, value_source=""):
        """The region wrote what `source` names (an attribute, an item, a
        global); later reads of it see the region's own value. `constant`:
        the value written is a literal of the code (LOAD_CONST);
        `value_source`: where the value came from, where the evaluator knows
        (`___v[3].size()[0]`: a size of a computed tensor)."""
        raise NotImplementedError

    def on_anonymous_read(self, owner, name, value):
        """The region read attribute `name` of `owner`, an object with no
        source, and got `value`, a Python scalar."""
        raise NotImplementedError

    def on_anonymous_store(self, owner, key, is_attr, constant=False, value_source=""):
        """The region is about to write attribute (is_attr) or item `key` of
        `owner`, an object with no source (one the call made, or one it
        reached by a path the evaluator does not name); `constant` and
        `value_source` as on_store's."""
        raise NotImplementedError

    def on_container_method(self, container, method, source, args=(), kwargs=None):
        """The region calls `method` of a list, dict, set or bytearray that
        changes it (append, update, pop, ...); `source` names the container,
        or is empty."""
        raise NotImplementedError

    def on_module_call(self, source, module):
        """The evaluator follows a call of the nn.Module at `source`."""
        raise NotImplementedError

    # --- calls the evaluator runs natively --------------------------------

    def enter_native(self, sizes, opaque):
        """A native call begins, given the tensor sizes `sizes`
        ([(int, source)]); opaque: it is Python code that may read sizes
        unseen. Each enter_native/enter_subscript is closed by exit_native."""
        raise NotImplementedError

    def enter_subscript(self, key):
        """A tensor subscript with `key` begins (closed by exit_native)."""
        raise NotImplementedError

    def on_slice_sizes(self, sl, sizes):
        """The slice `sl` was built from tensor sizes ([(value, source)])."""
        raise NotImplementedError

    def exit_native(self):
        """The innermost enter_native/enter_subscript ends."""
        raise NotImplementedError

    def enter_operand_size(self, value, source):
        """An operator begins whose operands are a tensor and `value`, a
        size read from `source` (`torch.arange(n) + x.size(1)`); closed by
        exit_operand_size."""
        raise NotImplementedError

    def exit_operand_size(self):
        """The operator of the innermost enter_operand_size ran: a size it
        did not take as a graph input is pinned (a guard on its value)."""
        raise NotImplementedError

    def on_native_method(self, source, obj, method):
        """The evaluator runs `method` of `obj` (at `source`) natively (an
        optimizer's step, say); obj None: `method` is a function the object
        at `source` holds as an attribute."""
        raise NotImplementedError

    def pause(self, args=()):
        """A call runs outside the graphs (disable(), disallow_in_graph) with
        `args`; closed by resume."""
        raise NotImplementedError

    def resume(self, result, name):
        """The paused call `name` returned `result`."""
        raise NotImplementedError

    # --- breaks ----------------------------------------------------------

    def on_break(self, reason, filename, lineno, escape=False, value=None):
        """The region breaks at filename:lineno for `reason`; escape: a tensor
        became a Python value (`value`). fullgraph=True raises here."""
        raise NotImplementedError

    def call_mark(self):
        """As the region function starts a call: an opaque mark the evaluator
        keeps in case a break under that call is resumed (or None)."""
        raise NotImplementedError

    def on_skip_frame(self, code, reason, bad_opcode):
        """The evaluator cannot run `code` (an opcode it lacks: bad_opcode >= 0)
        and runs the frame natively."""
        raise NotImplementedError
