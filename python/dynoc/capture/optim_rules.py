"""dynoc's rules for optimizer steps (docs/training.md, "Optimizer rules").

An optimizer's `step()` runs natively and its ATen calls are recorded as the
update graph. Left alone, a step bakes its learning rate into the graph as a
constant (a schedule's change is a recompile), and Adam's and AdamW's default
code reads the step count with `.item()` (its bias corrections are Python
floats): each step would be a break and a recompile. The rules here run the
same optimizer code the way torch runs it when a compiler or a CUDA graph
captures it:

- each group's learning rate is a 0-d tensor that dynoc owns and names
  `<optimizer>.param_groups[G]['lr']`, refreshed from the group before each
  step: the update graph reads it as a weight, so a new rate is a new value
  of that input, not a recompile. (SGD's tensor-lr path multiplies through
  `addcmul_` when the rate requires grad; the step runs under no_grad, so
  that flag only picks the path.)
- Adam, AdamW, RMSprop, NAdam, RAdam, ASGD, Adamax, Adadelta and Rprop run
  with `capturable=True` (torch.compile's note [torch.compile x capturable]),
  Adagrad as while compiling (it has no flag): the step count stays a tensor in
  the optimizer's state, the bias corrections are tensor ops, and the update
  writes the count back, +1 per step.
- A fused implementation (`fused=True`: one `_fused_adamw_` kernel call, no
  ATen ops to record) runs as the foreach one (`foreach=True`), whose
  `_foreach_*` calls capture/foreach.py records tensor by tensor: the same
  update, rounded as the per-tensor ops round.

The optimizer's own objects are restored after each step: code that reads
`group['lr']` or `group['capturable']` sees what it set.
"""
import contextlib
import weakref

import torch

# Optimizers with a capturable formulation (step count as a tensor), and
# those that only need the tensor learning rate (each checked against eager
# by test/e2e/test_jit_train_step.py). Others (LBFGS, Adafactor, SparseAdam,
# Muon) run their own code as it is, recorded with their hyperparameters
# guarded.
_CAPTURABLE = (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop, torch.optim.NAdam,
               torch.optim.RAdam, torch.optim.ASGD, torch.optim.Adamax, torch.optim.Adadelta,
               torch.optim.Rprop, torch.optim.Adagrad)
# Those whose single-tensor code makes the rate a Python number
# (`addcdiv_(..., value=-lr)`) or reads the step count with `.item()`: they run
# their foreach code, which takes both as tensors (Adamax's `_foreach_maximum_`
# is recorded as maximum and a copy, capture/foreach.py).
_FOREACH = (torch.optim.RMSprop, torch.optim.Adamax, torch.optim.Adadelta, torch.optim.Rprop,
            torch.optim.Adagrad)
_TENSOR_LR = (torch.optim.SGD,)

# Per optimizer: the 0-d learning-rate tensor of each group. One tensor per
# group for the optimizer's lifetime, so the update graph's weight of that
# name is one object whose value the rule refreshes before each step.
_lr_tensors = weakref.WeakKeyDictionary()


def applies(opt):
    """Whether `opt`'s step runs under a rule: one of _CAPTURABLE or _TENSOR_LR
    (single-tensor, foreach or fused; not differentiable) with plain-number
    hyperparameters."""
    if type(opt) not in _CAPTURABLE + _TENSOR_LR:
        return False
    for group in opt.param_groups:
        if group.get("differentiable"):
            return False
        if not isinstance(group.get("lr"), (int, float)) or \
                not all(isinstance(b, (int, float)) for b in group.get("betas", ())):
            return False
    return True


def ruled_keys(opt):
    """The hyperparameters and state entries the rule turns into tensor inputs:
    a guard on the optimizer's state leaves them out."""
    if type(opt) in _CAPTURABLE:
        return ("lr", "capturable"), ("step",)
    return ("lr",), ()


@contextlib.contextmanager
def _compiling():
    # torch's optimizers skip their eager-only device checks and keep the
    # step a tensor (optimizer._get_value) while a compiler traces them.
    import torch.compiler as tc
    saved = tc._is_compiling_flag
    tc._is_compiling_flag = True
    try:
        yield
    finally:
        tc._is_compiling_flag = saved


def lr_tensors(opt):
    """The learning-rate tensors of `opt`'s groups, refreshed from the groups'
    current values (call with the recorder paused: the refresh is not part of
    any graph)."""
    tensors = _lr_tensors.get(opt)
    if tensors is None or len(tensors) != len(opt.param_groups):
        tensors = [torch.zeros((), dtype=torch.float32, requires_grad=type(opt) in _TENSOR_LR)
                   for _ in opt.param_groups]
        _lr_tensors[opt] = tensors
    with torch.no_grad():
        for t, group in zip(tensors, opt.param_groups):
            t.fill_(float(group["lr"]))
    return tensors


def refresh_all():
    """Refreshes every optimizer's learning-rate tensors from its groups. A
    step whose guards pass runs the optimizer's own code, not the rule, so the
    tensors hold the rate of the last recorded step until this runs (before
    the weights file is written)."""
    for opt in list(_lr_tensors.keys()):
        lr_tensors(opt)


def scheduled_optimizer(fn):
    """The optimizer whose `step` the function `fn` is, where an LR scheduler
    replaced the optimizer's step by a wrapper of its own (it notes that the
    step ran and calls the optimizer's); else None. The wrapper reaches its
    optimizer through a weak reference in its closure."""
    if not getattr(fn, "_wrapped_by_lr_sched", False):
        return None
    for cell in getattr(fn, "__closure__", None) or ():
        held = cell.cell_contents
        if isinstance(held, weakref.ref):
            held = held()
        if isinstance(held, torch.optim.Optimizer) and held.__dict__.get("step") is fn:
            return held
    return None


def owners(tensors):
    """The optimizers whose learning-rate tensors are among `tensors` (a
    built step reads them as weights: it refreshes them before each call,
    since no optimizer code runs then)."""
    ids = {id(t) for t in tensors}
    return [opt for opt, lrs in list(_lr_tensors.items()) if any(id(t) in ids for t in lrs)]


def step_under_rule(opt, method, lrs):
    """A callable that runs `method` (the optimizer's bound `step`) under the
    rule with the learning-rate tensors `lrs`, restoring the groups after."""
    keys = ("lr", "capturable") if type(opt) in _CAPTURABLE else ("lr",)
    keys += ("fused", "foreach")

    def step(*args, **kwargs):
        saved = [{k: g[k] for k in keys if k in g} for g in opt.param_groups]
        for g, lr in zip(opt.param_groups, lrs):
            g["lr"] = lr
            if "capturable" in keys:
                g["capturable"] = True
            if g.get("fused") or type(opt) in _FOREACH:
                g["fused"], g["foreach"] = False, True
        try:
            with _compiling():
                return method(*args, **kwargs)
        finally:
            for g, values in zip(opt.param_groups, saved):
                for k in keys:
                    if k in values:
                        g[k] = values[k]
                    else:
                        g.pop(k, None)
    return step
