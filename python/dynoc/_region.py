"""A capture region: a function or module passed to dynoc.compile / torch.compile."""
import collections
import importlib.util
import inspect
import logging
import os
import sys
import sysconfig
import threading
import types
import warnings
import weakref

import torch

from . import _backends, _errors, _logs, _native
from .capture import mlir_writer as mw
from . import _stance
from .capture import dynamic as _dynamic, guards as _guards, session as _session, loop_step as _loop_step, step as _step, symbolic as _symbolic
from .jit import built as _built, dispatch as _dispatch
from .jit.compiled_module import CompiledModule, forward_inside_region
from .capture.recorder import Tracker
from .capture.resume import inline_cache_entries
from .jit.variant import compile_variant

# Held by the thread that captures (re-entrant: a capture enters the regions
# the program calls). Region._call.
_CAPTURE_LOCK = threading.RLock()

_Module = torch.nn.Module
_FunctionType = types.FunctionType
_LIBRARY_DIRS = tuple({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")})
_TORCH_NN = os.path.join(os.path.dirname(torch.__file__), "nn", "modules")
config = None  # dynoc.config (set by dynoc.compile)


def _read_config_limit():
    """dynoc.config.cache_size_limit, or the installed torch's default."""
    if config is not None and config.cache_size_limit is not None:
        return config.cache_size_limit
    import torch._dynamo.config
    return torch._dynamo.config.recompile_limit


# Under `dynoc capture` (and after dynoc.install()), torch._dynamo.config's
# limit applies: scripts set it there.
read_limit = _read_config_limit
# callable -> how the evaluator treats a call to it: "graph_break", "allow",
# "disallow", "forbid", "disable", "disable_frame" (the seed APIs fill it),
# "compiling" (True inside a region: torch's own is_compiling, which library
# code such as transformers' masks asks, as Dynamo folds it).
special_calls = {print: "side_effect", sys.__displayhook__: "side_effect",
                 torch.compiler.is_compiling: "compiling",
                 torch.compiler.is_dynamo_compiling: "compiling"}
for _level in ("debug", "info", "warning", "warn", "error", "exception", "critical", "log"):
    special_calls[getattr(logging.Logger, _level)] = "side_effect"
    special_calls[getattr(logging, _level)] = "side_effect"
capturing = 0  # regions being captured on the stack (dynoc.is_compiling)
# Calls of a captured variant whose body runs eagerly (under `dynoc capture`,
# or a variant not built): they stand for compiled code, in which Dynamo has
# folded is_compiling() to True, so it says True for them too.
standing_in = 0
run_only = 0  # calls inside dynoc.run(fn) on the stack: no new captures


# Third-party packages whose code is followed like user code, as Dynamo
# inlines it: transformers' modeling code (mask builders, output classes).
followed_packages = ["transformers"]


def _package_dirs():
    dirs = []
    for name in followed_packages:
        spec = importlib.util.find_spec(name) if name not in sys.modules else \
            sys.modules[name].__spec__
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(os.path.join(d, "") for d in spec.submodule_search_locations)
    return tuple(dirs)


def _follow(code):
    """Inline calls to this code? User code, torch.nn module forwards and the
    followed packages: yes; other library code runs natively (its ATen calls
    are still recorded)."""
    f = code.co_filename
    if f.startswith(_TORCH_NN):
        return True
    if f.startswith(os.path.dirname(__file__)):
        return False
    global _followed_dirs
    if _followed_dirs is None:
        _followed_dirs = _package_dirs()
    if _followed_dirs and f.startswith(_followed_dirs):
        return True
    return not f.startswith(_LIBRARY_DIRS) and not f.startswith("<frozen")


_followed_dirs = None


def _forward_of(module):
    """The function the evaluator follows for `module(...)`: its forward, or
    with forward (pre-)hooks registered, _call_with_hooks. None when backward
    hooks are registered (then the call runs natively)."""
    mm = torch.nn.modules.module
    if isinstance(module, CompiledModule):
        return forward_inside_region
    if module._backward_hooks or module._backward_pre_hooks or \
            mm._global_backward_hooks or mm._global_backward_pre_hooks:
        return None
    fwd = type(module).forward
    if not inspect.isfunction(fwd):
        return None
    if module._forward_hooks or module._forward_pre_hooks or \
            mm._global_forward_hooks or mm._global_forward_pre_hooks:
        return _call_with_hooks
    return fwd


def _call_with_hooks(module, *args, _dynoc_forward=None, **kwargs):
    """nn.Module.__call__ with forward pre-hooks and forward hooks, written out
    in plain Python so that the evaluator follows the hooks and forward like
    any user code (torch's own _call_impl uses closures it would run natively).
    `_dynoc_forward` replaces the forward call (a region around it)."""
    mm = torch.nn.modules.module
    for hook_id, hook in list(mm._global_forward_pre_hooks.items()) + \
            list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            res = hook(module, args, kwargs)
            if res is not None:
                args, kwargs = res
        else:
            res = hook(module, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
    if _dynoc_forward is not None:
        result = _dynoc_forward(*args, **kwargs)
    else:
        result = type(module).forward(module, *args, **kwargs)
    for hook_id, hook in list(mm._global_forward_hooks.items()) + \
            list(module._forward_hooks.items()):
        if hook_id in module._forward_hooks_with_kwargs or \
                hook_id in mm._global_forward_hooks_with_kwargs:
            res = hook(module, args, kwargs, result)
        else:
            res = hook(module, args, result)
        if res is not None:
            result = res
    return result


def _on_entry(fn, args, kwargs):
    """`dynoc capture --entry`: a call of the entry function, seen by the frame
    hook, runs as a call of the function's (one) region. The same for a
    function that a disable(recursive=False) function calls: Dynamo compiles
    that frame on its own."""
    region = _code_regions.get(fn.__code__)
    if region is None:
        region = _code_regions[fn.__code__] = Region(fn)
    return region(*args, **kwargs)


_code_regions = {}  # code -> the Region its calls run as


def set_entry(modules, func_name):
    """Makes every call of `func_name` defined in a module named in `modules`
    (a module's __name__) a capture region."""
    _ext().set_entry(list(modules), func_name, _on_entry)


def _initialize_extension(C):
    """Hands the capture extension the region layer's callbacks (run once,
    when _native first loads it)."""
    C.init(torch.Tensor, torch.nn.Module, inline_cache_entries(),
           _follow, _forward_of, special_calls, Region, _on_entry)
    _guards.native_check_tensor = C.check_tensor
    _guards.native_attr = C.attr


_native.set_initializer(_initialize_extension)
_ext = _native.ext


def _positional(code, fargs):
    """(name, source, value) of each positional argument of a call to `code`;
    those beyond its parameters land in its *args tuple, `L['args'][i]`."""
    names = code.co_varnames[:code.co_argcount]
    out = [(n, f"L['{n}']", v) for n, v in zip(names, fargs)]
    if code.co_flags & inspect.CO_VARARGS:
        star = code.co_varnames[code.co_argcount + code.co_kwonlyargcount]
        out += [(None, f"L['{star}'][{i}]", v)
                for i, v in enumerate(fargs[code.co_argcount:])]
    return out


def _guard_star_arguments(tracker, fn, fargs, kwargs):
    """How many arguments a call put in the function's *args and which
    keywords in its **kwargs decide what the captured code read: another
    count or other keywords recompile (Dynamo guards them too)."""
    code = fn.__code__
    npos, nkw = code.co_argcount, code.co_kwonlyargcount
    star = code.co_flags & inspect.CO_VARARGS
    if star:
        name = code.co_varnames[npos + nkw]
        tracker.value_guards[f"len(L['{name}'])"] = \
            f"len(L['{name}']) == {max(0, len(fargs) - npos)}"
    if code.co_flags & inspect.CO_VARKEYWORDS:
        name = code.co_varnames[npos + nkw + bool(star)]
        named = set(code.co_varnames[:npos + nkw])
        extra = sorted(k for k in kwargs if k not in named)
        tracker.value_guards[f"sorted(L['{name}'])"] = f"sorted(L['{name}']) == {extra!r}"


_signatures = weakref.WeakKeyDictionary()  # fn -> (its defaults, its signature)


def _signature(fn):
    """inspect.signature(fn), kept while fn's defaults stay the same objects
    (making it costs tens of microseconds, on every call of a region)."""
    defaults = (fn.__defaults__, fn.__kwdefaults__)
    hit = _signatures.get(fn)
    if hit is not None and hit[0][0] is defaults[0] and hit[0][1] is defaults[1]:
        return hit[1]
    sig = inspect.signature(fn, follow_wrapped=False)
    _signatures[fn] = (defaults, sig)
    return sig


def _locals(fn, fargs, kwargs):
    """The call's arguments and closure variables as the guards see them:
    L['x'], L['args'], L['scale'] (a free variable), ..."""
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    L = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            L[name] = cell.cell_contents
        except ValueError:  # an empty cell
            pass
    if not kwargs and len(fargs) == code.co_argcount and not code.co_kwonlyargcount \
            and not code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        L.update(zip(names, fargs))  # every parameter given: no defaults apply
        return L
    try:  # defaults too: a guard may name a parameter the call left out
        bound = _signature(fn).bind(*fargs, **kwargs)
        bound.apply_defaults()
        for name, value in bound.arguments.items():
            if name not in L:
                L[name] = value
    except (TypeError, ValueError):
        pass
    L.update(zip(names, fargs))
    if code.co_flags & inspect.CO_VARARGS:
        L[code.co_varnames[code.co_argcount + code.co_kwonlyargcount]] = \
            tuple(fargs[code.co_argcount:])
    L.update(kwargs)
    return L


GuardFail = collections.namedtuple("GuardFail", ["reason", "orig_code"])
_regions = weakref.WeakSet()  # every Region made (reset() forgets their variants)


def _note_eager_backward(result, session, entry):
    """When the autograd engine runs the backward of the region's result (a
    `loss.backward()` outside the region), the session notes that it ran in
    eager PyTorch, for the report."""
    from torch.utils._pytree import tree_leaves
    try:
        leaves = tree_leaves(result)
    except Exception:
        return
    node = next((v.grad_fn for v in leaves
                 if isinstance(v, torch.Tensor) and v.grad_fn is not None), None)
    if node is None or entry in session.eager_backward:
        return

    def note(grad_outputs):
        if entry not in session.eager_backward:
            session.eager_backward.append(entry)
    node.register_prehook(note)


def _stand_in(fn, fargs, kwargs):
    """Runs a captured variant's body eagerly in place of its compiled code."""
    global standing_in
    standing_in += 1
    try:
        return fn(*fargs, **kwargs)
    finally:
        standing_in -= 1


_eager_warned = set()  # (entry, reason) pairs already told


def _warn_eager(entry, reason, anywhere=False):
    """Never silently eager: the first time a region's variant runs eagerly
    for a reason, one warning line says where and why (DYNOC_LOGS keeps the
    details); the same reason at the same place is not repeated. anywhere:
    a reason of the machine, not the code (no dynoc binary, no compiler),
    said once whatever region meets it."""
    key = (None if anywhere else entry, reason)
    if key in _eager_warned:
        return
    _eager_warned.add(key)
    filename, line, name = entry.rsplit(":", 2)
    warnings.warn_explicit(
        f"dynoc: calls of {name} run eagerly, not compiled: {reason} "
        "(DYNOC_LOGS=graph_breaks,recompiles shows each capture; "
        "dynoc.counters['eager_variants'] counts them)", UserWarning, filename,
        int(line) if line.isdigit() else 0)


def forget_eager_warnings():
    _eager_warned.clear()


class Region:
    def __init__(self, target, backend="inductor", fullgraph=False, dynamic=None,
                 live=None, guard_fail_fn=None, guard_export_fn=None, cuda_graphs=False):
        _regions.add(self)
        # mode="reduce-overhead": built CUDA models replay CUDA graphs.
        self.cuda_graphs = cuda_graphs
        self.target = target
        self.guard_fail_fn = guard_fail_fn  # called with each failing guard's text
        self.guard_export_fn = guard_export_fn  # called with each new variant's guards
        self.live = live  # () -> tensors alive after the region (whole scripts)
        self.backend = backend
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.variants = []  # guard lists, one per captured variant
        self.variant_graphs = []  # the graphs of each variant
        # Decisions on sizes of computed tensors each static variant made
        # (capture/symbolic.py): its tensor guards imply them until dims turn dynamic.
        self.variant_computed = []
        # Per variant: its built graph (_built.CompiledGraph) that calls run
        # outside `dynoc capture`, or None (calls run the function eagerly).
        self.compiled = []
        self._checks = []  # per variant: (its guard list, compiled check)
        self.record_only = False  # explain/export: capture, never build
        # A resume function's region (capture/resume.py): its graphs, breaks and
        # recompiles are not the program's (Dynamo counts the first call's).
        self.internal = False
        self.eager_reason = None  # set: every call runs eagerly (resume functions)
        self.static_reason = None  # why the last recompile could not go dynamic
        # set_stance("eager_then_compile"): the first uncovered call ran eagerly.
        self.eager_example_seen = False
        self.session = None
        # The fast dispatcher of the variants as they are (jit/dispatch.py):
        # None until the next call makes it, False when calls need _call.
        self._fast = None

    def invalidate_dispatch(self):
        """The variants or their compiled code changed: the next call
        makes the dispatcher again."""
        self._fast = None

    def resume_region(self, code):
        """The region of a resume function (`code`, made at one of this
        region's breaks), compiled with this region's options."""
        r = Region(code, backend=self.backend, dynamic=self.dynamic,
                   guard_fail_fn=self.guard_fail_fn, guard_export_fn=self.guard_export_fn,
                   cuda_graphs=self.cuda_graphs)
        r.internal = True
        return r

    def forget(self):
        """Drops every variant and its compiled code (dynoc.reset()); the
        session keeps the graphs already captured."""
        for lst in (self.variants, self.variant_graphs, self.variant_computed, self.compiled,
                    self._checks):
            lst.clear()
        self.eager_reason = None
        self.static_reason = None
        self.eager_example_seen = False
        self.invalidate_dispatch()

    def compiled_calls(self):
        """How many calls ran built code (each variant's counter, summed)."""
        return sum(c.calls for c in self.compiled if c is not None)

    def _live(self):
        return list(self.live()) if self.live else []

    def _resolve(self, args):
        t = self.target
        if isinstance(t, torch.nn.Module):
            return type(t).forward, (t,) + tuple(args), t
        if inspect.ismethod(t):
            # nn.Module.compile() compiles the bound _call_impl: its module's
            # weights are parameters and buffers, as for compile(module).
            owner = t.__self__ if isinstance(t.__self__, torch.nn.Module) else None
            return t.__func__, (t.__self__,) + tuple(args), owner
        return t, tuple(args), None

    def __call__(self, *args, **kwargs):
        stance = _stance.current()  # torch.compiler.set_stance's, read per call
        call = self._call
        if stance is not None and _stance.runs_eagerly(stance):
            call = self._eager
        else:
            fast = self._fast
            if fast and not kwargs:  # the dispatcher checks the count itself
                result = fast(*args)
                if result is not _dispatch.MISS:
                    return result
            elif fast is None and self.compiled:
                self._fast = _dispatch.make(self) or False
        t = self.target
        if type(t) is _FunctionType:
            return call(*args, **kwargs)
        if isinstance(t, _Module) and _forward_of(t) is _call_with_hooks:
            # The compiled module's own hooks run around the region, natively.
            return _call_with_hooks(t, *args, _dynoc_forward=call, **kwargs)
        return call(*args, **kwargs)

    def _eager(self, *args, **kwargs):
        """The call as if never compiled (set_stance("force_eager"))."""
        t = self.target
        if type(t) is _FunctionType:
            return t(*args, **kwargs)
        fn, fargs, _ = self._resolve(args)
        if not inspect.isfunction(fn):
            return t(*args, **kwargs)
        return fn(*fargs, **kwargs)

    def _call(self, *args, **kwargs):
        # (on every call of a compiled function: kept short)
        t = self.target
        if type(t) is _FunctionType:
            fn, fargs, module = t, args, None
        else:
            fn, fargs, module = self._resolve(args)
            if not inspect.isfunction(fn):
                return self.target(*args, **kwargs)
        L = _locals(fn, fargs, kwargs)
        G = fn.__globals__
        checks = self._checks
        seen = len(self.variants)
        for i, guards in enumerate(self.variants):
            check = checks[i][1] if i < len(checks) and checks[i][0] is guards else self._check(i)
            if check(L, G):  # an existing variant covers this call
                compiled = self.compiled[i]
                if compiled is not None:
                    result = compiled(L, G)
                    if result is not _built.STALE:
                        return result
                    self.compiled[i] = None
                    self.invalidate_dispatch()
                return _stand_in(fn, fargs, kwargs)
        if self.eager_reason:
            return fn(*fargs, **kwargs)
        code = fn.__code__
        failure = _guards.first_failure(self.variants[-1], L, G) if self.variants else None
        if failure is not None and self.internal and failure.startswith("L['___stack"):
            # A Python value the breaking call returned (an .item(), say) is
            # specialized on: a capture per value would build on every call.
            self.eager_reason = f"a value made at the break changed ({failure} failed)"
            _logs.log("recompiles", f"{code.co_name}: calls run eagerly: {self.eager_reason}")
            return fn(*fargs, **kwargs)
        if failure is not None and self.guard_fail_fn is not None:
            self.guard_fail_fn(GuardFail(failure, code))
        miss = _stance.on_miss(self)
        if run_only or miss == "eager":  # dynoc.run() or the stance: cached code only
            return fn(*fargs, **kwargs)
        if miss == "fail":
            error = _stance.recompile_error(code, failure, L, G)
            if error is not None:
                raise error
        # The limit is read on a recompile only: torch's default costs an
        # import of torch._dynamo.
        limit = read_limit() if self.variants else None
        if limit is not None and len(self.variants) >= limit:
            entry = f"{code.co_filename}:{code.co_firstlineno}:{code.co_name}"
            static = f"; its variants stay static: {self.static_reason}" \
                if self.static_reason else ""
            reason = (f"it hit config.cache_size_limit ({limit} variants{static}); the last "
                      f"guard that failed: {failure}")
            if (entry, reason) not in _eager_warned:
                _session.current().eager_reasons.append({"entry": entry, "reason": reason})
            _warn_eager(entry, reason)
            return fn(*fargs, **kwargs)
        names = code.co_varnames[:code.co_argcount]
        # One capture at a time in the process (as Dynamo's compile lock): a
        # call on another thread meanwhile runs eagerly rather than waiting
        # (the capturing call runs the program, which may itself wait for
        # that thread) or capturing a second variant of the same call.
        if not _CAPTURE_LOCK.acquire(blocking=False):
            return fn(*fargs, **kwargs)
        try:
            if len(self.variants) != seen:  # another thread's capture covers it now
                return self._call(*args, **kwargs)
            return self._capture(fn, tuple(fargs), kwargs, module, names, failure, L)
        finally:
            _CAPTURE_LOCK.release()

    def _capture(self, fn, fargs, kwargs, module, names, failure, L):
        session = _session.current()
        self.session = session
        entry = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}:{fn.__code__.co_name}"
        if failure is not None and not self.internal:
            session.recompiles.append({"entry": entry, "guard": failure})
            _logs.log("recompiles", f"recompiling {entry}: guard failed: {failure}")
        params = {}
        if module is not None:
            for name, p in module.named_parameters():
                params[id(p)] = ("parameter", session.add_weight(name, p))
            for name, b in module.named_buffers():
                params[id(b)] = ("buffer", session.add_weight(name, b))
        positional = _positional(fn.__code__, fargs)
        sources = [src for _, src, _ in positional]
        user_inputs = [(src, v) for _, src, v in positional if isinstance(v, torch.Tensor)]
        user_inputs += [(f"L['{k}']", v) for k, v in kwargs.items() if isinstance(v, torch.Tensor)]
        tracker = Tracker(self, entry, params, user_inputs)
        tracker.resumable = self._compiles() and self.backend == "inductor"
        tracker.region_code = fn.__code__
        tracker.call_scope = (L, fn.__globals__)
        if module is not None and sources:
            tracker.on_module_call(sources[0], module)
        _guard_star_arguments(tracker, fn, fargs, kwargs)
        # Python scalars passed in are specialized on, as Dynamo does.
        for src, v in [(s, v) for _, s, v in positional] + \
                [(f"L['{k}']", v) for k, v in kwargs.items()]:
            if v is None or isinstance(v, (bool, int, float, str)):
                tracker.on_guard(src, v)
        global capturing
        capturing += 1
        try:
            with tracker:
                result = _ext().run_region(fn, tuple(fargs), kwargs or None, sources, tracker)
                if self._compiles() and self.backend == "inductor" and \
                        torch.is_grad_enabled() and not tracker.breaks:
                    try:
                        tracker.recorded_backward = tracker.record_backward(result)
                    except Exception as e:  # the program's own backward may still work
                        tracker.backward_error = f"{type(e).__name__}: {e}"
        except BaseException:
            # The program raised: what was captured up to here is kept (a
            # fullgraph region that refused a break keeps nothing, as Dynamo).
            if not tracker.refused_break and not self.internal:
                session.graphs.extend(tracker.finish(None, self._live()))
                session.breaks.extend(tracker.breaks)
            raise
        finally:
            capturing -= 1
        graphs = tracker.finish(result, self._live())
        guards = tracker.region_guards()
        computed = list(tracker.computed_size_guards)
        try:
            self._check_marked(user_inputs, guards, L, fn.__globals__)
        except Exception:
            session.graphs.extend(graphs)  # traced, as Dynamo's counts it
            raise
        if failure is not None and tracker.static_reason:
            _logs.log("recompiles", f"{entry}: stays static: {tracker.static_reason}")
            self.static_reason = tracker.static_reason  # named if it hits the limit
        if failure is not None and self.dynamic is not False and \
                tracker.static_reason is None and \
                self._merge_dynamic(guards, graphs, computed, session, entry, tracker, result,
                                    L, fn.__globals__,
                                    {src: _guards.static_marks(t) for src, t in user_inputs}):
            return result
        request = self._dynamic_request(user_inputs, failure is not None)
        if request and tracker.static_reason is None:
            try:
                guards = _dynamic.generalize(graphs, guards, request, L, fn.__globals__,
                                             computed)
                computed = []
                _logs.log("recompiles", f"{entry}: dims {_dynamic.dynamic_dims(guards)} "
                                        f"are dynamic from this run")
            except _dynamic.NotGeneral as e:
                _logs.log("recompiles", f"{entry}: stays static: {e}")
        if not self.internal:
            session.graphs.extend(graphs)
            session.breaks.extend(tracker.breaks)
        if not any(g.kind == "backward" for g in graphs) and not tracker.recorded_backward:
            _note_eager_backward(result, session, entry)
        if any(g.kind == "backward" and g.runs > 1 for g in graphs) and \
                not tracker.recorded_backward:  # a loop in a whole script
            made, refused = _loop_step.steps(
                graphs, len(session.steps),
                lambda t: session.add_weight(f"loop_state_{len(session.weights)}", t),
                session.weights)
            session.steps.extend(made)
            for reason in refused:
                session.step_refusals.append({"entry": entry, "reason": reason})
                _logs.log("graph_breaks", f"{entry}: no training step graph: {reason}")
        elif any(g.kind == "backward" for g in graphs) and not tracker.recorded_backward:
            try:
                session.steps.append(_step.stitch(graphs, tracker.breaks,
                                                  f"step_{len(session.steps)}"))
            except _step.NotAStep as e:
                session.step_refusals.append({"entry": entry, "reason": str(e)})
                _logs.log("graph_breaks", f"{entry}: no training step graph: {e}")
        for g in graphs:
            _logs.log("guards", f"guards of {g.name} ({entry}):\n" +
                      "\n".join(f"  {gd['text']}" for gd in g.guards))
            if _logs.enabled("graph_code"):
                _logs.log("graph_code", mw.write_module([g], _session.WEIGHTS_FILE))
        compiled = self._compile(graphs, tracker, result, entry, L, fn.__globals__)
        # A variant that decided on sizes it cannot name never merges.
        self.variant_graphs.append(None if tracker.static_reason else graphs)
        self.variant_computed.append(computed)
        self.compiled.append(compiled)
        # Last: a call on another thread sees the variant only once it is whole.
        self.variants.append(guards)
        self.invalidate_dispatch()
        if self.guard_export_fn is not None:
            self.guard_export_fn([g["text"] for g in guards])
        return result

    def _check(self, i):
        """Variant i's guards as one compiled function of (L, G)."""
        while len(self._checks) <= i:
            self._checks.append((None, None))
        guards, check = self._checks[i]
        if guards is not self.variants[i]:
            check = _guards.compile_check(self.variants[i])
            self._checks[i] = (self.variants[i], check)
        return check

    def _compiles(self):
        """Do this region's variants run built code (outside `dynoc capture`,
        explain and export, unless DYNOC_COMPILE=0)?"""
        session = self.session or _session.current()
        return session.out_dir is None and not self.record_only and _built.enabled()

    def _runs_users_backend(self):
        """Under `dynoc capture`, a region compiled with the script's own
        backend (a callable, or a name it registered) hands that backend the
        recording, as in process: the script's backend prints and counts as in
        its plain run, and its result runs the later calls."""
        session = self.session or _session.current()
        return (session.out_dir is not None and _built.enabled() and
                self.backend not in ("inductor", "eager"))

    def _compile(self, graphs, tracker, result, entry, L, G):
        """Outside `dynoc capture`: the variant's graph built and loaded, or
        None, with the reason logged, when its calls run eagerly."""
        if self.record_only:
            # explain: no build, but the reasons a build would not run
            self._refusal(graphs, tracker, result, entry, L, G)
            return None
        if not self._compiles() and not self._runs_users_backend():
            return None  # capture records; the script runs as written
        backend = self.backend
        if isinstance(backend, str) and backend not in ("inductor", "eager"):
            backend = _backends.REGISTERED[backend]
        try:
            return compile_variant(graphs, tracker, result, self.session.weights,
                                       self.session.constant_sources, backend, L, G,
                                       self.cuda_graphs)
        except _built.NotCompiled as e:
            if self.fullgraph and isinstance(e, _built.BuildFailed):
                raise _errors.BuildFailed(f"{entry}: {e}") from None
            _logs.log("graph_breaks", f"{entry}: calls run eagerly: {e}")
            _built.counters["eager_variants"] += 1
            self.session.eager_reasons.append({"entry": entry, "reason": str(e)})
            _warn_eager(entry, str(e), anywhere=isinstance(e, _built.BuildFailed))
            return None

    def _refusal(self, graphs, tracker, result, entry, L, G):
        """dynoc.explain: why this variant's calls would run eagerly (into
        the session's eager reasons), its graphs checked, not built."""
        backend = self.backend
        if isinstance(backend, str) and backend not in ("inductor", "eager"):
            backend = _backends.REGISTERED[backend]
        try:
            compile_variant(graphs, tracker, result, self.session.weights,
                            self.session.constant_sources, backend, L, G, build=False)
        except _built.NotCompiled as e:
            self.session.eager_reasons.append({"entry": entry, "reason": str(e)})

    def _dynamic_request(self, user_inputs, recompile):
        """{source: dims} to make dynamic in a new capture before a second size
        is seen: dims marked with mark_dynamic; with dynamic=True every dim;
        on a recompile, the dims an earlier variant made dynamic."""
        request = {}
        for src, t in user_inputs:
            dims = set(getattr(t, "_dynamo_dynamic_indices", ()))
            if self.dynamic is True:
                dims |= set(range(t.dim()))
            if recompile and self.dynamic is not False:
                for guards in self.variants:
                    dims |= set(_dynamic.dynamic_dims(guards).get(src, ()))
            dims -= _guards.static_marks(t)
            if dims:
                request[src] = dims
        return request

    @staticmethod
    def _check_marked(user_inputs, guards, L, G):
        """Raises ConstraintViolationError, as Dynamo does, when the capture
        pins a dim that mark_dynamic asked for (a size guard allows no other
        size). Dynamo raises before its graph runs; dynoc after the call ran,
        as it records by running."""
        marked = {src: set(t._dynamo_dynamic_indices) - _guards.static_marks(t)
                  for src, t in user_inputs if getattr(t, "_dynamo_dynamic_indices", None)}
        pinned = _dynamic.guard_pinned(guards, marked, L, G) if marked else {}
        if pinned:
            from torch.fx.experimental.symbolic_shapes import ConstraintViolationError
            dims = ", ".join(f"{src}.size()[{d}]" for src, ds in sorted(pinned.items())
                             for d in sorted(ds))
            pins = [g["text"] for g in guards if g["kind"] in ("size", "value")]
            raise ConstraintViolationError(
                f"Constraints violated ({dims})! dynoc: marked dynamic with mark_dynamic, "
                f"but the code specializes it: {'; '.join(pins)}")

    def _merge_dynamic(self, guards, graphs, computed, session, entry, tracker, result, L, G,
                       static_marks):
        """dynamic=None/True: a recompile for new sizes of the same computation
        makes an earlier variant dynamic instead of adding one (capture/dynamic.py)."""
        for i, old in enumerate(self.variants):
            if self.variant_graphs[i] is None:
                continue
            merged = _dynamic.merge_guards(old, guards)
            if merged is None or not _dynamic.dynamic_dims(merged):
                continue
            static = {src: sorted(set(dims) & static_marks.get(src, set()))
                      for src, dims in _dynamic.dynamic_dims(merged).items()}
            static = {src: dims for src, dims in static.items() if dims}
            if static:
                _logs.log("recompiles", f"{entry}: stays static: mark_static on {static}")
                continue
            why, plan, assumed = _dynamic.plan_merge(self.variant_graphs[i], graphs,
                                                     session.weights)
            if why:
                _logs.log("recompiles", f"{entry}: stays static: not the same graphs "
                                        f"as variant {i}: {why}")
                continue
            try:
                resolved = _dynamic.resolve_both(
                    (self.variant_graphs[i], self.variant_computed[i], old),
                    (graphs, computed, guards), _dynamic.dynamic_dims(merged),
                    _dynamic.planned_calls(plan))
            except _symbolic.Unresolved as e:
                _logs.log("recompiles", f"{entry}: stays static: a decision on a computed "
                                        f"size: {e}")
                continue
            _dynamic.apply_merge(self.variant_graphs[i], graphs, plan)
            _dynamic.add_size_guards(merged, self.variant_graphs[i], resolved)
            _dynamic.add_size_guards(merged, self.variant_graphs[i],
                                     [_dynamic.Assumed(t) for t in assumed])
            if tracker.breaks:  # rebuilt recipes would keep the first sizes
                tracker.resume_point = "its sizes are dynamic (breaks resume in static variants)"
            # The dynamic code before the wider guards: a call on another
            # thread that passes the old guards may run either.
            self.compiled[i] = self._compile(self.variant_graphs[i], tracker, result, entry,
                                             L, G)
            self.variant_computed[i] = []
            self.variants[i] = merged
            self.invalidate_dispatch()
            dims = _dynamic.dynamic_dims(merged)
            session.recompiles[-1]["dynamic"] = dims
            _logs.log("recompiles", f"{entry}: sizes changed, same graphs: dims {dims} "
                                    f"are dynamic now")
            return True
        return False
