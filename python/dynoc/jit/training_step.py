"""A whole training step compiled in the same process (docs/training.md, "In
the same process: the whole step"): a region that runs its forward, the
program's own `loss.backward()` and an optimizer update (a `torch.compile`d
`train_step`) records a forward, a backward and an update graph, which
capture/step.py stitches into one step graph. It is built once and each later
call is one call of it:

  the parameters and optimizer state are the program's own tensors, bound as
  the model's weights: the step writes their new values there, in place, as
  the optimizer does eagerly (their version counters moved on, so that other
  built graphs reading them see the change);
  each trained leaf's `.grad` is left as the recorded call left it: the
  step's final gradient (after an in-place clip, say), or None where the
  program set it to None after the update;
  the learning rates are the optimizers' rate tensors (capture/optim_rules.py),
  refreshed from their groups before each call: a scheduler's new rate is
  the next call's;
  the result is rebuilt from the step's outputs (a loss that no longer
  requires grad: the backward already ran).
"""
import torch

from . import built as _built
from ..capture import optim_rules as _optim_rules, step as _step
from ..runtime.model import _rebuild

_increment_version = torch.autograd.graph.increment_version


class TrainingStep:
    """A variant's forward, backward and update as one built step graph."""

    def __init__(self, graphs, tracker, weights, sources, cuda_graphs):
        try:
            step = _step.stitch(graphs, tracker.breaks, f"{graphs[0].name}_step",
                                gradients=True)
        except _step.NotAStep as e:
            raise _built.NotCompiled(f"its forward, backward and update are no training step "
                                     f"graph: {e}") from None
        for v in step.inputs:
            if v.kind != "user" and v.name not in weights:
                raise _built.NotCompiled(f"the step reads '{v.name}', which is no tensor of "
                                         "the program")
        used = {v.name: weights[v.name] for v in step.inputs if v.kind != "user"}
        self.built = _built.BuiltGraph(step, used, sources, cuda_graphs)
        # Gradients the recorded call left set (None: the program cleared them
        # after the update, or it trained an argument, which keeps its own).
        self.gradients = []
        for entry in step.gradients:
            leaf = weights.get(entry["input"])
            if leaf is None:
                continue
            self.gradients.append((leaf, entry["output"] if leaf.grad is not None else None,
                                   cuda_graphs))
        self.optimizers = _optim_rules.owners(used.values())
        self.rates = None
        self.written = [weights[m["input"]] for m in step.mutations if m["input"] in weights]
        self.structure = step.output_structure
        self.returned = _built.ReturnedArguments(self.structure)
        self.calls = 0

    def __call__(self, L, G):
        built = self.built
        if built.sourced is not None and built.stale(L, G):
            return _built.STALE
        # New rates first: what the model computed from the old ones at load
        # (a weight decay's 1 - lr * wd) is computed again by the refresh.
        rates = [[g["lr"] for g in opt.param_groups] for opt in self.optimizers]
        if rates != self.rates:
            for opt in self.optimizers:
                _optim_rules.lr_tensors(opt)
            self.rates = rates
        # A parameter replaced by another object: its update would go to the
        # old one.
        if (built.tracked or _built._replaced[0] != built.replaced_seen) and \
                built.refresh_weights(rebind_replaced=False):
            return _built.STALE
        self.calls += 1
        _built.counters["compiled_calls"] += 1
        outputs = built.run(*built.inputs(L, G))
        if self.written:
            _increment_version(self.written)
            if built.tracked:  # the step's own writes: nothing to refresh
                built.versions = [t._version for t in built.tracked_tensors]
        for leaf, k, copied in self.gradients:
            # A CUDA graph's outputs are overwritten by its next replay.
            leaf.grad = None if k is None else (outputs[k].clone() if copied else outputs[k])
        return _rebuild(self.structure, outputs, self.returned(L, G))
