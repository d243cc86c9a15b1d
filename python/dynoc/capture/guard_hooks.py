"""The evaluator's guard hooks, as the recording implements them: a Python
value, a size, a type, a key, None-ness the region's code decided on becomes a
guard of every graph of the capture; a module call guards its hooks, an
optimizer's native step its state (and runs dynoc's rule for it).
A mixin of capture/recorder.py's Tracker (capture/evaluator_hooks.py declares
the protocol)."""
import torch

from . import guards as _guards, optim_rules as _optim_rules, symbolic as _symbolic


class GuardHooks:
    """The guard callbacks of EvaluatorHooks, for one region's Tracker."""

    def on_guard(self, source, value):
        if self._written(source):
            return
        if ".size()[" in source or ".numel()" in source:
            # a size used where only its value will do
            self.on_size_guard(_guards.value_guard_text(source, value))
        else:
            self.value_guards[source] = _guards.value_guard_text(source, value)

    def on_size_guard(self, text):
        """A decision on tensor sizes (`L['x'].size()[0] > 4`): implied by the
        tensor guards while the sizes are static, the symbolic guard of a
        variant whose dims turn dynamic. One on sizes of computed tensors or
        element counts waits in computed_size_guards until dims turn dynamic
        (capture/symbolic.py expresses it in the inputs' sizes then)."""
        if "<untracked>" in text:
            # A size of a tensor made outside the graphs: its relation to the
            # inputs' sizes is not known, so the variant stays static.
            self.static_reason = f"a decision on a size whose origin is not tracked ({text})"
            return
        if _symbolic.needs_resolution(text):
            self.computed_size_guards[text] = None
            return
        self.size_guards[text] = None

    def on_module_call(self, source, module):
        """The evaluator follows a call of `module` (or the region is its
        forward): which hooks run is decided by the hooks registered on it and
        its submodules, so they are guarded, once per module tree."""
        for s in self.hook_sources:
            if source == s or source.startswith((s + ".", s + "[")):
                return
        self.hook_sources.append(source)
        key = f"___hook_ids({source})"
        self.value_guards[key] = f"{key} == {_guards.hook_ids(module)!r}"

    def on_native_method(self, source, obj, method):
        """The evaluator runs `method` of `obj` (at `source`) natively. An
        optimizer's step records an update that depends on the optimizer's
        hyperparameters and state, so those are guarded (a change
        recompiles); other objects need nothing here. Returns the callable to
        run instead (dynoc's rule for an Adam/AdamW step), or None."""
        if obj is None:  # a function held as an attribute
            obj = _optim_rules.scheduled_optimizer(method)
        if not isinstance(obj, torch.optim.Optimizer) or self._written(source):
            return None
        key = f"___optimizer_state({source})"
        # As the region found it: a later method (zero_grad after the step)
        # sees the state the step made.
        self.value_guards.setdefault(key, f"{key} == {_guards.optimizer_state(obj)!r}")
        # Its state tensors (momentum buffers, Adam's moments) are weights the
        # update reads and writes back: named by where they live.
        for gi, group in enumerate(obj.param_groups):
            for pi, p in enumerate(group["params"]):
                for name, t in obj.state.get(p, {}).items():
                    if isinstance(t, torch.Tensor):
                        self.optimizer_state[id(t)] = t
                        self.on_tensor(t, f"{source}.state[{source}.param_groups[{gi}]"
                                          f"['params'][{pi}]]['{name}']")
        if getattr(method, "__name__", "") != "step" or not _optim_rules.applies(obj):
            return None
        self.paused += 1  # refreshing the rule's tensors is no graph op
        try:
            lrs = _optim_rules.lr_tensors(obj)
        finally:
            self.paused -= 1
        for gi, t in enumerate(lrs):
            self.optimizer_state[id(t)] = t
            self.on_tensor(t, f"{source}.param_groups[{gi}]['lr']")
        return _optim_rules.step_under_rule(obj, method, lrs)

    def on_type_guard(self, source, obj):
        """A match statement tested the type of `obj` (a class, mapping or
        sequence pattern): its type is guarded, by identity."""
        if self._written(source):
            return
        key = f"___type_id({source})"
        self.value_guards[key] = f"{key} == {id(type(obj))}"

    def on_key_guard(self, source, key, present):
        """A mapping pattern looked `key` up in the mapping at `source`."""
        if self._written(source):
            return
        text = f"{key!r} {'in' if present else 'not in'} {source}"
        self.value_guards[f"{key!r} in {source}"] = text

    def on_guard_none(self, source, is_none):
        if self._written(source):
            return
        self.value_guards[source] = f"{source} is {'' if is_none else 'not '}None"
