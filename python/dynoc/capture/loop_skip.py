"""Counts a settled training loop's iterations instead of recording them.

A script captured whole records its training loop once per iteration (folded
at the end by repeats.py), at a cost per recorded op many times the op's own:
a 300-step nanoGPT-style loop captured in 3.3x its plain run's time, nearly
all of it recording iterations that fold into the first ones. What a user
wants from the loop is its step, and the step is found from a few iterations
(capture/loop_step.py).

So the recording watches its own stream of segments (the ATen calls between
two breaks, by overload and first operand's shape, and the break that ends
them: a graph break, a backward pass's start or end). At the end of each
backward pass it looks for a period: the last segments repeating, three
times in a row, a block that holds a backward pass (not before eight
backward passes were recorded: a short loop is recorded whole). Once found,
the loop has settled: later ops run unrecorded (the dispatch mode only runs
them), each compared with the settled block as it comes. A block that
matches counts as one more run of its graphs (`Graph.counted`, the report's
iterations). The first op or break that differs (a periodic print, the
loop's end) ends the skipping: recording resumes at that op, with the ops of
its segment that ran before it recorded by running them again when that is
safe (under no_grad, none writing memory or drawing random numbers: an
evaluation after the loop); or at the end of the backward pass that follows,
when the segment is a forward autograd records. What the unrecorded ops made
enters later graphs as named inputs, as a disable()d call's results do; a
tensor they changed in place (a weight, an optimizer's state) stays the
output of the graph that changes it, as in a folded loop: the output of its
latest run.

Only a whole script's region skips (`dynoc capture`): in process each call is
its own capture. `dynoc capture --record-all-iterations` turns it off.
docs/capture.md, "Long loops".
"""
import torch

from .op_facts import _ESCAPES
from .values import _tensors

# A backward pass's end (its start is a break of its own, with a location).
BACKWARD_END = "end of the autograd backward pass"
# What a value the unrecorded iterations made is called as a graph input.
UNRECORDED = "a value made by the settled loop's unrecorded iterations"

_REPEATS = 3      # the block must have repeated this many times in a row
_FIRST = 8        # backward passes recorded before a loop may first settle
_WINDOW = 6000    # segments kept to find a block in (a block is at most a third)


class Period:
    """The stream of segments, a settled block in it, and what matched it."""

    def __init__(self):
        self.sigs = []      # one hashable per segment, newest last
        self.ops = []       # the op keys of each segment
        self.graphs = []    # the graph that recorded each segment's ops, or None
        self.current = []   # the op keys of the segment under way
        self.block = None   # (sigs, ops, graphs) of the settled block, while skipping
        self.pos = 0        # the block's segment under way
        self.differs = None  # where the stream left the block, while still skipping
        self.counted = 0    # blocks counted, not recorded
        self.settled_at = []  # (location, iterations counted) per settling
        self.backward_passes = 0  # recorded ones
        self.since_resume = 0  # recorded since skipping last ended

    def op(self, key):
        """An op of the segment under way; while skipping, compared with the
        block's: True if it is the first that differs."""
        first = False
        if self.block is not None and self.differs is None:
            expected = self.block[1][self.pos]
            if len(self.current) >= len(expected) or expected[len(self.current)] != key:
                self.differs = "an op the settled iteration did not run"
                first = True
        self.current.append(key)
        return first

    def boundary(self, marker, graph):
        """The segment under way ends at `marker` (its ops recorded into
        `graph`, or None). While skipping: True once the block is left."""
        ops, self.current = tuple(self.current), []
        sig = hash((ops, marker))
        self.sigs.append(sig)
        self.ops.append(ops)
        self.graphs.append(graph)
        if len(self.sigs) > _WINDOW:
            del self.sigs[:1000], self.ops[:1000], self.graphs[:1000]
        if self.block is None:
            return False
        if self.differs is None and sig != self.block[0][self.pos]:
            self.differs = f"a break the settled iteration did not have ({marker})"
        if self.differs is not None:
            return True
        g = self.block[2][self.pos]
        if g is not None:
            g.counted += 1
        self.pos = (self.pos + 1) % len(self.block[0])
        if self.pos == 0:
            self.counted += 1
        return False

    def settle(self, where):
        """At a backward pass's end: starts skipping if the stream's last
        segments are one block repeated `_REPEATS` times, the longest such
        block first (a loop that prints every tenth step settles on ten
        steps). Returns True when it does."""
        self.backward_passes += 1
        self.since_resume += 1
        if self.backward_passes < _FIRST or self.since_resume < _REPEATS:
            # A short loop is recorded whole (as Dynamo would); after a
            # resumption, the iterations after it are recorded again, so the
            # last recorded one is a steady one (capture/loop_step.py reads
            # the latest run of each folded graph).
            return False
        sigs, n = self.sigs, len(self.sigs)
        last = sigs[-1]
        for p in range(n // _REPEATS, 0, -1):
            if sigs[n - 1 - p] != last:
                continue
            start = n - _REPEATS * p
            if sigs[start + p:] == sigs[start:n - p]:
                self.block = (sigs[n - p:], self.ops[n - p:], self._recorded(n - p))
                self._align(n, p)
                self.pos, self.differs = 0, None
                self.settled_at.append([where, 0])
                return True
        return False

    def _align(self, n, p):
        """The last recorded iteration's graphs get the outputs their earlier
        occurrences have, in the same order: the iteration that would have
        read them runs unrecorded, and whatever reads them later (after a
        print, after the loop) must not give them another order, which
        would keep them from folding with the rest of the loop."""
        for i in range(p):
            g = self.graphs[n - p + i]
            for k in range(2, _REPEATS + 1):
                like = self.graphs[n - k * p + i]
                if g is not None and like is not None and like is not g:
                    _align_outputs(g, like)
                    break

    def _recorded(self, start):
        """The graphs of the segments from `start` on; a segment that ran
        unrecorded (an earlier settling) stands for the latest recorded
        segment like it (a steady iteration's: the first ones may differ)."""
        latest = {}
        for sig, g in zip(self.sigs[:start], self.graphs[:start]):
            if g is not None:
                latest[sig] = g
        out = []
        for sig, g in zip(self.sigs[start:], self.graphs[start:]):
            out.append(g if g is not None else latest.get(sig))
        return out

    def resume(self):
        """Skipping ends: the block's count goes to the report."""
        self.settled_at[-1][1] = self.counted
        self.block, self.differs = None, None
        self.since_resume = 0


def _align_outputs(g, like):
    """Adds to `g` the outputs `like` (a graph of the same ops) has, in
    `like`'s order, by the position of each output's producer."""
    if len(g.nodes) != len(like.nodes) or len(g.inputs) != len(like.inputs):
        return
    where = {v.vid: g.inputs[i] for i, v in enumerate(like.inputs)}
    for node, mine in zip(like.nodes, g.nodes):
        if node.op != mine.op or len(node.results) != len(mine.results):
            return
        where.update((r.vid, m) for r, m in zip(node.results, mine.results))
    for o in like.outputs:
        if o.vid not in where:
            return
        g.add_output(where[o.vid], saved=o.vid in like.saved_only)


class LoopSkipping:
    """The Tracker's side of skipping (capture/recorder.py): segments noted
    as it records, and the dispatch of a settled loop's ops."""

    def _init_loop_skipping(self, enabled):
        self.period = Period() if enabled else None
        self.skipping = False
        self._nested = 0  # inside an op's own recording (a decomposition's parts)
        # (func, args, kwargs, out) of the skipped segment so far, or None
        # when it cannot be run again
        self._segment_log = []

    def _note_op(self, func, args):
        """Notes the op in the segment under way; while skipping, True if it
        is the first op that differs from the settled block."""
        if self.period is not None and not self._nested and not self.paused:
            first = args[0] if args else None
            return self.period.op(
                (id(func), first.shape if isinstance(first, torch.Tensor) else None))
        return False

    def _note_boundary(self, marker):
        """The recording reached a segment's end (called before the graph
        that holds its ops is closed)."""
        if self.period is None or self.paused:
            return
        self.period.boundary(marker, self.current if self.current.nodes else None)
        if marker == BACKWARD_END and not self.stopped and \
                self.period.settle(self.region.session.user_location()):
            self.skipping = True
            self._segment_log = []
            self.by_memory.clear()  # no backward pass of these iterations is recorded

    def _skipped_boundary(self, marker):
        """A segment's end while skipping: recording resumes at the first
        one after the block was left that is outside a backward pass."""
        self._segment_log = []
        if self.period.boundary(marker, None) and self._backward_task is None:
            self._resume_recording()

    def _resume_recording(self):
        why = self.period.differs
        self.period.resume()
        self.skipping = False
        self.breaks.append({"reason": f"recording resumes after a settled loop's "
                                      f"iterations, counted: {why}",
                            "location": self.region.session.user_location()})

    def _record_again(self, func, args, kwargs):
        """Recording resumes at this op, mid-segment: the segment's earlier
        ops are recorded by running them again (their results are bound to
        the tensors the script holds) when the log kept them (an evaluation
        under no_grad after the loop); then this op is run and recorded."""
        log, self._segment_log = self._segment_log, []
        self._resume_recording()
        self._nested += 1  # noted already
        try:
            if log is not None:
                for f, a, k, out in log:
                    if f._schema.name in _ESCAPES:
                        continue  # no op: its break is behind
                    again = self.__torch_dispatch__(f, None, a, k)
                    self._bind_to(out, again, a, k)
            return self.__torch_dispatch__(func, None, args, kwargs)
        finally:
            self._nested -= 1

    def _bind_to(self, out, again, args, kwargs):
        """The Values recorded for `again`'s tensors stand for `out`'s."""
        outs = _tensors(out)
        for o, a in zip(outs, _tensors(again)):
            v = self.values.get(id(a))
            if v is not None:
                self.break_values.pop(id(o), None)
                self.values[id(o)] = v
                self._bind(o)
                self.tensor_ids.track(o)
        self._remember_saved(args, kwargs, outs)

    def _dispatch_skipped(self, func, args, kwargs):
        """A settled loop's op: run, compared with the block, not recorded."""
        if not self.paused:
            task = torch._C._current_graph_task_id()
            if task != -1 and self._backward_task is None:
                self._backward_task = task
                self.on_break(self._backward_pass_reason, None, None)
            elif task == -1 and self._backward_task is not None:
                self._backward_task = None
                self._skipped_boundary(BACKWARD_END)
                if not self.skipping:  # recording resumed: this op is recorded
                    return self.__torch_dispatch__(func, None, args, kwargs)
        if self._note_op(func, args) and self._backward_task is None and \
                (self._segment_log is not None or not torch.is_grad_enabled()):
            # (else at the end of the backward pass that follows: a forward
            # recorded in part would leave autograd's saved values unknown)
            return self._record_again(func, args, kwargs)
        out = func(*args, **kwargs)
        if self.paused:
            return out
        if self._segment_log is not None:
            # Kept to be recorded if the segment leaves the block, unless it
            # writes memory or draws random numbers (running it again would
            # change what the script sees) or autograd records or runs it
            # (holding its tensors changes which ops autograd runs: the
            # block's would differ from the recorded iterations').
            if func._schema.is_mutable or torch.is_grad_enabled() or \
                    self._backward_task is not None or \
                    torch.Tag.nondeterministic_seeded in func.tags:
                self._segment_log = None
            else:
                self._segment_log.append((func, args, kwargs, out))
        if not func._schema.is_mutable:  # (an in-place op returns what it wrote)
            for t in _tensors(out):
                self.break_values[id(t)] = UNRECORDED
                self.tensor_ids.track(t)
        name = func._schema.name
        if name in _ESCAPES:
            if self._escape_reported:
                self._escape_reported = False
            else:
                self.on_break(_ESCAPES[name], None, None)
        return out
