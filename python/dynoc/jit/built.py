"""Compiled execution in the same process (docs/capture.md, "In the same
process"): a variant's graph built by the `dynoc build` pipeline, kept in a
disk cache, loaded through libdynrt and called for the calls whose guards pass.

The build runs the `dynoc` binary (the pipeline is C++; the C++ compiler it
drives is a process of its own anyway). A cache entry is a directory named by
a hash of everything the build's output depends on; it is built under a
temporary name and renamed into place, so two processes building one entry at
once both end with a whole entry, and a reader never sees half of one.
"""
import hashlib
import json
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import weakref

import torch
from torch.nn.modules.module import (register_module_buffer_registration_hook,
                                     register_module_module_registration_hook,
                                     register_module_parameter_registration_hook)
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.weak import WeakIdKeyDictionary

from . import fx as _fx
from .. import _logs, _native, _toolchain
from ..capture import mlir_writer as mw, results
from ..capture.guards import compile_source, input_expr
from ..runtime.model import Error as ModelError, LoadedModel, _rebuild
from ..capture import session as _session
from .._version import __version__

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
_BUILD_FLAGS = ("-O2",)
_identity = None  # the dynoc binary's and the C++ compiler's identity (key)
_nvcc = None  # the CUDA compiler's (key of --target=cuda builds)
_version = operator.attrgetter("_version")  # read for every weight on every call
# What happened in this process (dynoc.counters; DYNOC_STATS writes it at exit):
# calls that ran built code, builds, cache hits, variants left eager.
counters = {"compiled_calls": 0, "builds": 0, "cache_hits": 0, "eager_variants": 0}


# What a compiled graph returns when a tensor it took as a constant is no
# longer the one its source names: the call (and later ones) run eagerly.
STALE = object()


# Parameters and buffers replaced by another object (`m.fc.weight =
# nn.Parameter(...)`, `m.bn.running_mean = torch.zeros(...)`,
# `load_state_dict(..., assign=True)`): nn.Module's global registration hooks
# see each one before it takes the old one's place. A built graph bound to
# the old tensor follows the chain to the new one (checked when the count
# moved: one integer compare per call).
#
# The hooks are global, so they also run inside what torch's own Dynamo
# traces for code that does not use dynoc (transformers' Llama slices
# `self.layers[:n]`, a new ModuleList, on every forward): a counter read there
# becomes one of Dynamo's guards, which fails at every call (a recompile per
# call, then eager at the recompile limit). They return at once where Dynamo
# traces: torch's own is_compiling, kept here before dynoc.install() routes
# torch.compiler's to dynoc, is folded to True in Dynamo's graphs and is
# False when the hook runs for real (dynoc's evaluator runs it natively).
_replacements = WeakIdKeyDictionary()  # old tensor -> its successor (or None)
_replaced = [0]
_dynamo_tracing = torch.compiler.is_compiling


def _replacement_hook(table):
    def note(module, name, value):
        if _dynamo_tracing():
            return
        old = module.__dict__.get(table, {}).get(name)
        if old is not None and old is not value:
            _replacements[old] = value
            _replaced[0] += 1
    return note


def _submodule_registered(module, name, value):
    # A submodule assigned (`m.bn = nn.BatchNorm1d(4)`): the weights a built
    # graph reads through it may be other tensors now. Which ones only the
    # graph's own module knows (a tied weight lives on in its other owner),
    # so each built graph looks its weights up again (BuiltGraph.paths).
    if not _dynamo_tracing():
        _replaced[0] += 1


# Weights whose version counter a built graph compares on every call (what it
# precomputed from them: BuiltGraph.tracked), by id. torch's fused optimizers
# (`fused=True`, the Trainer's default AdamW) write parameters without moving
# their version counters: after such a step, those of them a built graph
# tracks are marked changed (one torch global hook, a no-op for every other
# tensor), so the next call recomputes what it derived from the old values.
_tracked = weakref.WeakValueDictionary()  # id -> tensor


def _after_optimizer_step(optimizer, args, kwargs):
    if not _tracked or not any(g.get("fused") for g in optimizer.param_groups):
        return
    written = [p for g in optimizer.param_groups for p in g["params"]
               if _tracked.get(id(p)) is p]
    if written:
        torch.autograd.graph.increment_version(written)


register_optimizer_step_post_hook(_after_optimizer_step)
register_module_parameter_registration_hook(_replacement_hook("_parameters"))
register_module_buffer_registration_hook(_replacement_hook("_buffers"))
register_module_module_registration_hook(_submodule_registered)


def _weight_paths(root, tensors):
    """{index: [(submodule names, table, name), ...]}: everywhere module
    `root` holds each of `tensors` (a tied weight: in several places), for
    those it holds."""
    where = {}
    for prefix, m in root.named_modules(remove_duplicate=False):
        for table in ("_parameters", "_buffers"):
            for name, t in m.__dict__.get(table, {}).items():
                if t is not None:
                    path = (tuple(prefix.split(".")) if prefix else (), table, name)
                    where.setdefault(id(t), []).append(path)
    return {i: where[id(t)] for i, t in enumerate(tensors) if id(t) in where}


def _held_at(root, path):
    """The tensor `root` holds at a _weight_paths path now, or None."""
    names, table, name = path
    m = root
    for part in names:
        m = m.__dict__.get("_modules", {}).get(part)
        if m is None:
            return None
    return m.__dict__.get(table, {}).get(name)


class NotCompiled(Exception):
    """Why a variant runs eagerly in process (logged under graph_breaks)."""


class BuildFailed(NotCompiled):
    """The machine could not build the graph: no dynoc binary, one that does
    not run, a missing toolchain, a failed build (a fullgraph=True region
    raises dynoc.BuildFailed instead of running eagerly)."""


# Said after a build failure the machine causes (a tool or library missing,
# a binary that does not load): where a user finds what it lacks.
_DOCTOR_HINT = " (`dynoc doctor` lists what this machine lacks for builds)"
_MACHINE_PROBLEM = (r"not found|error while loading shared libraries|cannot execute|"
                    r"No such file or directory|cannot find -l")


def enabled():
    """DYNOC_COMPILE=0 turns compiled execution off (regions only record)."""
    return os.environ.get("DYNOC_COMPILE", "1") != "0"


def dynoc_binary():
    """DYNOC_BIN, else the binary an installed wheel carries, else the
    checkout's bazel-bin one."""
    packaged = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_bin",
                            "dynoc")
    path = os.environ.get("DYNOC_BIN") or (
        packaged if os.path.exists(packaged)
        else os.path.join(_ROOT, "bazel-bin", "tools", "dynoc", "dynoc"))
    if not os.path.exists(path):
        raise BuildFailed(f"the dynoc binary is not at {path} (reinstall dynoc; in a "
                          "checkout, bazel build //...; or set DYNOC_BIN)")
    return path


def cache_enabled():
    return os.environ.get("DYNOC_CACHE", "1") != "0"


def cache_dir():
    base = os.environ.get("DYNOC_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "dynoc", "jit")
    return base


def _file_identity(program):
    """A program's identity for the cache key: where it resolves to (through
    symlinks and alternatives), its size and modification time. A stat, not
    `program --version`: a process per tool cost tens of milliseconds of
    every warm first call, and an upgrade replaces the file anyway."""
    path = program if os.sep in program else shutil.which(program)
    if not path:
        return f"{program}|(not found)"
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return f"{program}|(not found)"
    return f"{program}|{real}|{st.st_size}|{st.st_mtime_ns}"


def _tool_identity():
    """What besides the graph decides the built code: dynoc's version, the
    dynoc binary and the C++ compiler ($CXX, else c++) it runs."""
    global _identity
    if _identity is None:
        _identity = "|".join((__version__, _file_identity(dynoc_binary()),
                              _file_identity(os.environ.get("CXX", "c++"))))
    return _identity


def _nvcc_identity():
    """The CUDA compiler a --target=cuda build runs (as the build finds it:
    $NVCC, PATH, $CUDA_HOME)."""
    global _nvcc
    if _nvcc is None:
        _nvcc = _file_identity(os.environ.get("NVCC") or shutil.which("nvcc") or os.path.join(
            os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"))
    return _nvcc


def cache_key(text, flags=()):
    h = hashlib.sha256()
    cuda = _nvcc_identity() if "--target=cuda" in flags else ""
    for part in (text, " ".join(_BUILD_FLAGS + tuple(flags)), _tool_identity(), cuda,
                 sys.version):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


class _Progress:
    """Prints one line on stderr when the build takes longer than a second."""

    def __init__(self, what):
        self.what = what
        self.start = time.monotonic()
        self.timer = threading.Timer(1.0, self._say)
        self.said = False

    def _say(self):
        self.said = True
        sys.stderr.write(f"[dynoc] building {self.what} ...\n")
        sys.stderr.flush()

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        if self.said and exc[0] is None:
            sys.stderr.write(f"[dynoc] built {self.what} in "
                             f"{time.monotonic() - self.start:.1f} s\n")


def target_flags(graph, weights):
    """The `dynoc build` flags of the target the graph's tensors live on:
    none for the CPU; for CUDA tensors `--target=cuda`, the current GPU's
    architecture, and `--allow-tf32` when torch lets f32 matmuls use TF32
    (eager's numerics). Tensors on both raise NotCompiled."""
    devices = {g["device"] for g in graph.guards if g.get("device")}
    # A 0-d CPU constant (a Python number the recording made a tensor, as
    # `x / math.sqrt(d)`) goes along with CUDA tensors, as in eager.
    devices |= {t.device.type for t in weights.values() if t.dim() or t.device.type != "cpu"}
    if devices <= {"cpu"}:
        return ()
    if devices != {"cuda"}:
        raise NotCompiled(f"its tensors are on {' and '.join(sorted(devices))}; a built "
                          "graph runs on one device")
    major, minor = torch.cuda.get_device_capability()
    flags = ("--target=cuda", f"--arch=sm_{major}{minor}")
    if torch.backends.cuda.matmul.allow_tf32:
        flags += ("--allow-tf32",)
    return flags


def _build_into(directory, text, weights, flags):
    """Writes the graph file and its weights into `directory` and runs
    `dynoc build` there; raises NotCompiled with the build's message."""
    with open(os.path.join(directory, "graph.mlir"), "w") as f:
        f.write(text)
    if weights:
        from safetensors.torch import save_file
        # safetensors refuses two names on one storage (a global read by the
        # forward and saved for the backward): the later ones are copies.
        tensors, seen = {}, set()
        for n, t in weights.items():
            t = t.detach().cpu().contiguous()
            key = t.untyped_storage().data_ptr()
            tensors[n] = t.clone() if key in seen else t
            seen.add(key)
        save_file(tensors, os.path.join(directory, _session.WEIGHTS_FILE))
    p = subprocess.run([dynoc_binary(), "build", "graph.mlir", "-o", "model.so",
                        *_BUILD_FLAGS, *flags], cwd=directory, capture_output=True,
                       text=True, env=_toolchain.build_env())
    if p.returncode != 0:
        # The diagnostic's own line (`graph.mlir:15:11: error: ...`), not the
        # source line and caret that follow it.
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        errors = [ln for ln in lines if " error: " in ln or ln.startswith("error: ")]
        message = (errors or lines or [f"exit {p.returncode}"])[0]
        if "compiler failed" in message and len(errors) > 1:
            message += "; its first error: " + errors[1].split(" error: ", 1)[-1]
        # The doctor's hint where the machine, not the graph, is the cause.
        machine = p.returncode in (126, 127) or re.search(_MACHINE_PROBLEM, message)
        raise BuildFailed("dynoc build failed: " + message + (_DOCTOR_HINT if machine else ""))
    # The build copied the weights beside the model; the input copy goes.
    if weights:
        os.remove(os.path.join(directory, _session.WEIGHTS_FILE))


def build(graph, weights):
    """The model .so of `graph` (a _graph.Graph) whose weights are `weights`
    (name -> tensor), from the cache or built now. Returns (path, hit)."""
    text = mw.write_module([graph], _session.WEIGHTS_FILE)
    flags = target_flags(graph, weights)
    what = f"{graph.name} ({len(graph.nodes)} ops, {graph.entry}" + \
        (", cuda)" if flags else ")")
    if not cache_enabled():
        counters["builds"] += 1
        directory = tempfile.mkdtemp(prefix="dynoc-jit-")
        with _Progress(what):
            _build_into(directory, text, weights, flags)
        return os.path.join(directory, "model.so"), False, directory
    root = cache_dir()
    # The graph's name (graph_N, numbered in this process) is no part of the
    # key: the same graph captured again after reset() is the same entry.
    entry = os.path.join(root, cache_key(re.sub(rf"\b{graph.name}\b", "graph", text), flags))
    model = os.path.join(entry, "model.so")
    if os.path.exists(model):
        _logs.log("recompiles", f"{what}: from the cache ({entry})")
        counters["cache_hits"] += 1
        return model, True, None
    if os.path.isdir(entry):  # an entry emptied by hand or by a disk fault
        _discard_entry(entry, "it has no model.so")
    counters["builds"] += 1
    os.makedirs(root, exist_ok=True)
    _remove_abandoned_builds(root)
    tmp = tempfile.mkdtemp(prefix=".building-", dir=root)
    try:
        with _Progress(what):
            _build_into(tmp, text, weights, flags)
        try:
            os.rename(tmp, entry)
        except OSError:  # another process finished the same entry first
            if not os.path.exists(model):
                raise
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return model, False, None


# A build folder older than this was abandoned (its process was killed).
_ABANDONED_SECONDS = 3600


def _remove_abandoned_builds(root):
    """Removes the temporary folders of builds killed half way (a process
    that dies while building leaves its `.building-*` folder)."""
    now = time.time()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        if not name.startswith(".building-"):
            continue
        path = os.path.join(root, name)
        try:
            if now - os.stat(path).st_mtime > _ABANDONED_SECONDS:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass  # another process removed it


def _discard_entry(entry, why):
    """Removes cache entry `entry` (it does not load: `why`) so that the
    next build writes it again; renamed first, so that a process loading
    it meanwhile never sees half of it. One warning on stderr."""
    sys.stderr.write(f"[dynoc] the cache entry {entry} does not load ({why}): "
                     "building it again\n")
    _logs.log("recompiles", f"discarded cache entry {entry}: {why}")
    doomed = f"{entry}.discarded-{os.getpid()}"
    try:
        os.rename(entry, doomed)
    except OSError:  # another process discarded it already
        return
    shutil.rmtree(doomed, ignore_errors=True)


class BuiltGraph:
    """One graph built and loaded, its weights bound to the program's tensors:
    the part of a compiled variant that runs a graph."""

    def __init__(self, graph, weights, sources, cuda_graphs=False, root=None):
        for v in graph.inputs:
            if v.kind == "user" and not v.name.startswith(("L[", "G[")) and \
                    not (graph.kind == "backward" and v.name.startswith(("graph_", "grad("))):
                raise NotCompiled(f"input '{v.name}' is no argument of the region")
        path, self.cache_hit, tmpdir = build(graph, weights)
        try:
            try:
                self.model = LoadedModel(path, cuda_graphs=cuda_graphs)
            except ModelError as e:
                if not self.cache_hit:
                    raise NotCompiled(f"its built model does not load: {e}") from None
                # A cache entry damaged on disk (truncated, overwritten, its
                # weights changed): dropped, said once, and built again.
                _discard_entry(os.path.dirname(path), str(e))
                path, self.cache_hit, tmpdir = build(graph, weights)
                self.model = LoadedModel(path, cuda_graphs=cuda_graphs)
        finally:
            if tmpdir:  # DYNOC_CACHE=0: the loaded .so needs no files any more
                shutil.rmtree(tmpdir, ignore_errors=True)
        users = [v.name for v in graph.inputs if v.kind == "user"]
        self.user_sources = users
        self.inputs = compile_source([input_expr(u, self.model.device) for u in users]) \
            if graph.kind == "forward" else None
        # Weights live in the module's own tensors (no copy): what an eager
        # in-place update (an optimizer step, load_state_dict) writes is what
        # the next call reads; a BatchNorm's running statistics are updated
        # there by the model. A weight that is not contiguous is not bound:
        # the variant runs eagerly.
        self.weights = []
        for name in self.model.weight_names():
            t = weights[name]
            data = t.detach()
            if data.device != self.model.device:  # a CPU scalar of a CUDA graph: copied
                data = data.to(self.model.device)
            if not data.is_contiguous():
                raise NotCompiled(f"weight '{name}' is not contiguous")
            self.model.bind_weight(name, data)
            self.weights.append((name, t, data))
        # An in-place change reaches the model through the bound memory; only
        # a weight the model computed something from (LoadedModel.
        # derived_weights: packed convolution weights) or holds a copy of (a
        # CPU scalar of a CUDA graph) needs it told. Those are the ones whose
        # version counter every call compares.
        prepared = self.model.derived_weights()
        self.tracked = [i for i, (name, t, data) in enumerate(self.weights)
                        if name in prepared or data.device != t.device]
        self.tracked_tensors = [self.weights[i][1] for i in self.tracked]
        _tracked.update((id(t), t) for t in self.tracked_tensors)
        self.versions = list(map(_version, self.tracked_tensors))
        self.same_versions = _native.ext().same_versions  # (C) every call
        self.replaced_seen = _replaced[0]
        # The region's module (a module region): where each weight is held
        # in it, looked up again after a submodule was assigned.
        self.root = root
        self.paths = _weight_paths(root, [t for _, t, _ in self.weights]) \
            if root is not None else {}
        # LoadedModel._run itself: one Python call less on every call.
        self.run = lambda *tensors, _run=self.model._run: _run(tensors, False)
        # Constants reached through the arguments or globals (a tensor in a
        # list argument, a global tensor): the same tensor must be there.
        sourced = [name for name in self.model.weight_names()
                   if sources.get(name, "").startswith(("L[", "G[", "___G("))]
        self.sourced = compile_source([sources[n] for n in sourced]) \
            if sourced else None
        self.sourced_ptrs = tuple(weights[n].data_ptr() for n in sourced)

    def stale(self, L, G):
        """Does a tensor constant's source hold another tensor now?"""
        if self.sourced is None:
            return False
        try:
            now = tuple(t.data_ptr() for t in self.sourced(L, G))
        except Exception:
            now = None
        if now != self.sourced_ptrs:
            _logs.log("recompiles", "a tensor constant of the compiled graph changed "
                                    "(its source holds another tensor): calls run eagerly")
            return True
        return False

    def refresh_weights(self, rebind_replaced=True):
        """A weight changed in place since the last call: the model
        recomputes what it precomputed from it (packed convolution weights).
        A parameter replaced by another object is bound in its place (one
        of another shape, dtype or device, or with `rebind_replaced` False:
        returns True, the call must run eagerly)."""
        if _replaced[0] != self.replaced_seen and self._follow_replacements(rebind_replaced):
            return True
        if self.same_versions(self.tracked_tensors, self.versions):
            return False
        versions = list(map(_version, self.tracked_tensors))
        if versions != self.versions:
            for i, now, was in zip(self.tracked, versions, self.versions):
                if now != was:
                    name, t, data = self.weights[i]
                    if data.device != t.device:
                        data.copy_(t.detach())
                    self.model.bind_weight(name, data)
            self.versions = versions
        return False

    def _follow_replacements(self, rebind):
        self.replaced_seen = _replaced[0]
        for i, (name, t, data) in enumerate(self.weights):
            new = t
            while new is not None and new in _replacements:
                new = _replacements[new]
            if new is t and i in self.paths:
                held = [_held_at(self.root, p) for p in self.paths[i]]
                if any(h is not held[0] for h in held):
                    _logs.log("recompiles", f"weight '{name}' is held by several modules and "
                                            "one of them now holds another: calls run eagerly")
                    return True
                new = held[0]
            if new is t:
                continue
            ok = rebind and new is not None and new.shape == t.shape and new.dtype == t.dtype and \
                new.device == t.device and new.is_contiguous()
            if not ok:
                _logs.log("recompiles", f"weight '{name}' was replaced by another tensor"
                          + ("" if rebind else " (a training graph)") + ": calls run eagerly")
                return True
            data = new.detach()
            self.model.bind_weight(name, data)
            self.weights[i] = (name, new, data)
            if i in self.tracked:
                k = self.tracked.index(i)
                self.tracked_tensors[k] = new
                self.versions[k] = new._version
                _tracked[id(new)] = new
            _logs.log("recompiles", f"weight '{name}' was replaced by another tensor of its "
                                    "shape: the built graph reads the new one")
        return False


class CompiledGraph:
    """A variant's graph, built and loaded: called with the region's L and G,
    it runs the model on the tensors its user inputs name and returns the
    region's result."""

    def __init__(self, graph, weights, sources, cuda_graphs=False, root=None,
                 side_effects=None, refs=None):
        self.built = BuiltGraph(graph, weights, sources, cuda_graphs, root)
        self.model = self.built.model
        self.inputs, self.run = self.built.inputs, self.built.run
        structure = graph.output_structure
        # The commonest result, one tensor output, is returned as it is.
        self.single = structure["index"] if structure.get("type") == "tensor" and \
            not side_effects else None
        self.structure = structure
        # Python side effects replayed after the graph (jit/side_effects.py)
        # and the Python values the result's description holds.
        self.side_effects, self.refs = side_effects, refs
        self.returned = ReturnedArguments(
            structure, side_effects.descriptions() if side_effects else ())
        self.calls = 0

    def direct(self, names):
        """For _dispatch: (a call of the graph's input tensors, their
        positions in `names`, the region's parameters) when the inputs are
        parameters themselves and nothing else of L or G is read (no tensor
        constant of an argument's, no argument returned as it is); else None."""
        built = self.built
        if self.inputs is None or built.sourced is not None or \
                self.returned.values is not None or self.side_effects:
            return None
        where = {f"L[{n!r}]": k for k, n in enumerate(names)}
        if not all(src in where for src in built.user_sources):
            return None
        return self._call_tensors, tuple(where[src] for src in built.user_sources)

    def _call_tensors(self, *tensors):
        # __call__ for the inputs as direct() gives them (every compiled call
        # of a module's forward at batch 1 goes through here: kept short).
        built = self.built
        if (built.tracked or _replaced[0] != built.replaced_seen) and built.refresh_weights():
            return STALE
        self.calls += 1
        counters["compiled_calls"] += 1
        outputs = built.model._run(tensors, False)
        if self.single is not None:
            return outputs[self.single]
        return _rebuild(self.structure, outputs, None, self.refs)

    def __call__(self, L, G):
        built = self.built
        if built.sourced is not None and built.stale(L, G):
            return STALE
        if (built.tracked or _replaced[0] != built.replaced_seen) and built.refresh_weights():
            return STALE
        self.calls += 1
        counters["compiled_calls"] += 1
        outputs = self.run(*self.inputs(L, G))
        if self.single is not None:
            return outputs[self.single]
        arguments = self.returned(L, G)
        if self.side_effects:
            self.side_effects(outputs, arguments, self.refs, L, G)
        return _rebuild(self.structure, outputs, arguments, self.refs)


class ReturnedArguments:
    """The region's arguments that its result (or a side effect's value)
    holds as they are (no graph output): called with L and G, {source:
    value} for _rebuild, or None."""

    def __init__(self, structure, more=()):
        self.sources = sorted(set().union(*(results.sources(s) for s in (structure, *more))))
        self.values = compile_source(self.sources) if self.sources else None

    def __call__(self, L, G):
        return dict(zip(self.sources, self.values(L, G))) if self.values else None


class BackendGraph:
    """A variant's graph as a torch.fx.GraphModule (jit/fx.py) given to a
    backend: "eager" runs it as it is (ATen op by op); a callable backend
    (or one registered by name) gets it with example inputs and returns the
    callable that runs it."""

    def __init__(self, graph, weights, backend, L, G):
        for v in graph.inputs:
            if v.kind == "user" and not v.name.startswith(("L[", "G[")):
                raise NotCompiled(f"input '{v.name}' is no argument of the region")
        try:
            gm, sources = _fx.graph_module(graph, weights)
        except _fx.NotConvertible as e:
            raise NotCompiled(f"no GraphModule for the backend: {e}")
        self.inputs = compile_source([input_expr(s) for s in sources])
        if backend == "eager":
            self.run = gm
        else:
            self.run = backend(gm, list(self.inputs(L, G)))
            if not callable(self.run):
                raise NotCompiled(f"backend {getattr(backend, '__name__', backend)!r} returned "
                                  f"{type(self.run).__name__}, not a callable")
        self.structure = graph.output_structure
        users = [v.name for v in graph.inputs if v.kind == "user"]
        # What the graph changed in place, written back as eager would have:
        # into the argument (by its position) or the weight itself.
        self.writebacks = [(users.index(m["input"]) if m["input"] in users else None,
                            weights.get(m["input"]), m["output"]) for m in graph.mutations]
        self.returned = ReturnedArguments(self.structure)
        self.calls = 0

    def __call__(self, L, G):
        inputs = self.inputs(L, G)
        self.calls += 1
        counters["compiled_calls"] += 1
        with torch.no_grad():
            outputs = list(self.run(*inputs))
            for k, weight, o in self.writebacks:
                (inputs[k] if k is not None else weight).copy_(outputs[o])
        return _rebuild(self.structure, outputs, self.returned(L, G))


def write_stats(path):
    """DYNOC_STATS=PATH: at exit, this process's counters, graph, break and
    recompile counts and why variants ran eagerly, as JSON."""
    session = _session.current()
    stats = dict(counters,
                 graphs=sum(1 for g in session.graphs if g.kind == "forward"),
                 breaks=len(session.breaks), recompiles=len(session.recompiles),
                 eager_reasons=session.eager_reasons)
    with open(path, "w") as f:
        json.dump(stats, f, indent=1)
