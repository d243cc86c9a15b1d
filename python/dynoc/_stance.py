"""torch.compiler.set_stance, as dynoc's regions obey it.

torch keeps the stance in `torch._dynamo.eval_frame._stance` (a DynamoStance:
stance, skip_guard_eval_unsafe, backend); set_stance as a call, context
manager or decorator sets it there, and Dynamo reads it each time a compiled
function is entered. dynoc reads the same object at the same moments, so a
stance set for Dynamo holds for dynoc's regions too:

- force_eager: every call runs the original function, nothing is captured
  or run built (`is_compiling()` is False inside).
- eager_on_recompile: calls a variant covers run it; a call no variant covers
  runs eagerly and captures nothing (as dynoc.run()).
- fail_on_recompile: a call no variant covers raises Dynamo's RuntimeError
  ("Detected recompile when torch.compile stance is 'fail_on_recompile'").
- eager_then_compile, aot_eager_then_compile: a region's first uncovered call
  runs eagerly; the next one captures.
- skip_guard_eval_unsafe: every guard is still checked. The flag lets Dynamo
  skip guards it deems redundant; checking them all gives the same variant
  whenever that is safe, and the right one when it is not.
- default with force_backend="eager": as force_eager; "inductor": dynoc's
  own build. Any other backend is not supported: one warning, and dynoc's
  build runs.

Never importing torch._dynamo itself: until something imports it, no stance
can have been set.
"""
import sys
import warnings

_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
            "eager_then_compile", "aot_eager_then_compile")
_warned_backends = set()


def current():
    """The stance in force, or None for the default one (the common case,
    kept to a dictionary lookup and two attribute reads)."""
    m = sys.modules.get("torch._dynamo.eval_frame")
    if m is None:
        return None
    s = m._stance
    if s.stance == "default" and s.backend is None:
        return None
    if s.stance not in _STANCES:
        raise RuntimeError(f"invalid torch.compile stance '{s}'")
    return s


def runs_eagerly(stance):
    """Does every call run the original function under `stance` (a value of
    current(), not None)?"""
    if stance.stance == "force_eager":
        return True
    if stance.stance == "default" and stance.backend is not None:
        backend = stance.backend
        if backend == "eager":
            return True
        if backend != "inductor" and id(backend) not in _warned_backends:
            _warned_backends.add(id(backend))
            warnings.warn(f"dynoc: set_stance(force_backend={backend!r}) is not supported "
                          "(only 'eager' and 'inductor'); dynoc's own build runs",
                          stacklevel=3)
    return False


def on_miss(region):
    """What a call that no variant of `region` covers does under the stance in
    force: None (capture as usual), "eager" (run the original function, capture
    nothing) or "fail" (raise recompile_error)."""
    stance = current()
    if stance is None:
        return None
    s = stance.stance
    if s == "eager_on_recompile":
        return "eager"
    if s == "fail_on_recompile":
        return "fail"
    if s in ("eager_then_compile", "aot_eager_then_compile") and \
            not region.eager_example_seen:
        region.eager_example_seen = True
        return "eager"
    return None


def _has_torch(code, L, G):
    """Dynamo's has_tensor_in_frame: does the frame name a torch module among
    its globals or hold a tensor or module in its locals (through lists,
    tuples and dicts)?"""
    import torch
    for name in code.co_names:
        obj = G.get(name)
        if isinstance(obj, type(sys)) and (obj is torch or obj.__name__.startswith("torch.")):
            return True
    seen = set()

    def holds(obj):
        if id(obj) in seen:
            return False
        seen.add(id(obj))
        if isinstance(obj, (torch.Tensor, torch.nn.Module)) or \
                (type(obj) is type and issubclass(obj, torch.nn.Module)):
            return True
        if type(obj) in (list, tuple):
            return any(holds(v) for v in obj)
        if type(obj) is dict:
            return any(holds(v) for v in list(obj.values()))
        return False
    return any(holds(v) for v in L.values())


def recompile_error(code, failure, L, G):
    """Dynamo's error for a capture under fail_on_recompile (None where Dynamo
    would not raise: a frame with nothing of torch in it)."""
    if not _has_torch(code, L, G):
        return None
    message = ("Detected recompile when torch.compile stance is 'fail_on_recompile'. "
               f"filename: '{code.co_filename}', function name: '{code.co_name}', "
               f"line number: {code.co_firstlineno}")
    if failure is not None:
        message += f"\n    triggered by the following guard failure(s):\n    - {failure}"
    return RuntimeError(message)
