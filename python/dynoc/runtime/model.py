"""dynoc.load: run a model .so built by `dynoc build` through libdynrt.

Inputs and outputs cross as DLPack tensors without copies; the GIL is released
while the model runs. A failed guard raises GuardError with the guard's words.
A model built with --target=cuda takes and returns torch CUDA tensors on the
current stream: its outputs come from torch's allocator (the runtime runs
into them), so nothing synchronizes the device.
"""
import atexit
import contextlib
import importlib
import json
import os

import torch
from torch.utils import dlpack

# torch.utils.dlpack's functions for capsules, without its Python checks
# (on every call of a model).
_to_dlpack = torch._C._to_dlpack
_from_dlpack = torch._C._from_dlpack
_Tensor = torch.Tensor
# The current CUDA stream's handle without a torch.cuda.Stream object (what
# Inductor's generated code reads; CUDA builds of torch have it).
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

try:
    import _dynrt
except ImportError as e:  # the extension is built by `bazel build //...`
    _dynrt = None
    _import_error = e

Error = _dynrt.Error if _dynrt else RuntimeError
GuardError = _dynrt.GuardError if _dynrt else RuntimeError


_classes = {}  # "module.QualName" -> the class (dataclass results)


def _class(python_type):
    """The class "module.QualName" names, or None where it does not import."""
    cls = _classes.get(python_type)
    if cls is None:
        module, _, qualname = python_type.rpartition(".")
        try:
            cls = importlib.import_module(module)
            for part in qualname.split("."):
                cls = getattr(cls, part)
        except Exception:
            return None
        _classes[python_type] = cls
    return cls


def _rebuild(structure, outputs, inputs=None, refs=None):
    """The model's outputs in the structure its manifest records. In process:
    `inputs`, source -> value, for results that are the call's own arguments;
    `refs`, the Python values "python" entries index (capture/results.py)."""
    kind = structure.get("type")
    if kind == "tensor":
        return outputs[structure["index"]]
    if kind == "input_or_constant" and inputs is not None and "source" in structure:
        return inputs[structure["source"]]
    if kind == "dict":
        return {k: _rebuild(v, outputs, inputs, refs) for k, v in structure["items"].items()}
    if kind == "constant":
        return structure["value"]
    if kind == "python" and refs is not None:
        return refs[structure["ref"]]
    if kind == "dataclass":
        fields = {k: _rebuild(v, outputs, inputs, refs) for k, v in structure["items"].items()}
        cls = _class(structure["python_type"])
        if cls is None:  # the class is not importable here: its fields
            return fields
        try:
            return cls(**fields)
        except Exception:
            return fields
    if kind == "object":
        cls = refs[structure["class"]] if refs is not None else _class(structure["python_type"])
        if cls is not None:
            # A new object of the class with the captured object's attributes
            # (its __init__ is not run, as copy.copy does not run it).
            obj = cls.__new__(cls)
            obj.__dict__.update({k: _rebuild(v, outputs, inputs, refs)
                                 for k, v in structure["items"].items()})
            return obj
    if "items" in structure:
        items = [_rebuild(v, outputs, inputs, refs) for v in structure["items"]]
        return items if kind == "list" else tuple(items)
    raise Error(f"dynoc.load: output structure of type '{kind}' ({structure.get('python_type', '')}) cannot be rebuilt "
                "from the model's outputs")


_DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
           "bfloat16": torch.bfloat16, "int64": torch.int64, "int32": torch.int32,
           "int16": torch.int16, "int8": torch.int8, "uint8": torch.uint8, "bool": torch.bool}


class LoadedModel:
    """A callable model: `m(*tensors)` returns outputs as the manifest says."""

    def __init__(self, path, cuda_graphs=True, weights=None, communicator=None):
        if _dynrt is None:
            raise ImportError(f"dynoc.load needs the _dynrt extension; run "
                              f"`bazel build //...` ({_import_error})")
        self._model = _dynrt.Model(str(path), None if weights is None else str(weights))
        self.path = str(path)
        self._bound = {}  # name -> the tensor a weight lives in (bind_weight)
        self.manifest = json.loads(self._model.manifest())
        device_type, device_id = self._model.device()
        self.device = torch.device("cuda", device_id) if device_type == 2 else torch.device("cpu")
        self._cuda = device_type == 2
        if not cuda_graphs:
            self._model.set_cuda_graphs(False)
        self._communicator = None
        if communicator is not None:
            self.set_communicator(communicator)
        graph = self.manifest["graphs"][0]
        self._out_dtypes = [_DTYPES[o["dtype"]] for o in graph["outputs"]]
        self._num_inputs = sum(1 for i in graph["inputs"] if i["kind"] == "user")
        self._structure = graph.get("output_structure")
        # In-place updates of user inputs the graph recorded functionally: after
        # a run, output `output` is copied into user input number k.
        users = [i["name"] for i in graph["inputs"] if i["kind"] == "user"]
        self._writebacks = [(users.index(m["input"]), m["output"])
                            for m in graph.get("mutations", []) if m["input"] in users]
        # Outputs that only carry a weight's new value (a training step's
        # parameters and optimizer state: libdynrt copies them into the
        # model's weights) and that the call does not return: on a GPU a call
        # reuses one buffer for each instead of allocating it anew (the tiny
        # GPT's step has 120 of them). On the CPU the runtime's own
        # allocations measured no slower.
        returned = set(_indices(self._structure)) if self._structure else set()
        self._kept_outputs = sorted(
            m["output"] for m in graph.get("mutations", [])
            if m["input"] not in users and m["output"] not in returned)
        self._kept = {}  # output index -> its reused buffer

    def set_communicator(self, communicator):
        """Binds the communicator the model's collectives run through (a
        TorchDistributedCommunicator, or None to unbind): every rank's call
        checks the groups' sizes and that all ranks loaded the same graphs
        (dynrt_model_set_communicator)."""
        self._model.set_communicator(None if communicator is None else communicator.address)
        self._communicator = communicator  # the C struct lives as long as it does

    def __call__(self, *tensors):
        outputs = self._run(tensors, reuse=bool(self._structure) and
                            self._structure.get("type") != "intermediate")
        if not self._structure or self._structure.get("type") == "intermediate":
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        return _rebuild(self._structure, outputs)

    def run_outputs(self, *tensors):
        """Runs the model; returns every output of its graph, as a list, in
        the graph's order (a forward graph's saved values included)."""
        return self._run(tensors, reuse=False)

    def _run(self, tensors, reuse):
        """run_outputs; with `reuse`, the outputs in _kept_outputs are written
        into the buffers of the previous call (the caller does not get them)."""
        if len(tensors) != self._num_inputs:
            raise TypeError(f"{self.path} takes {self._num_inputs} tensors, got {len(tensors)}")
        capsules = []
        for t in tensors:
            if type(t) is not _Tensor and not isinstance(t, _Tensor):
                raise TypeError(f"input {len(capsules)}: expected a torch.Tensor, got "
                                f"{type(t).__name__}")
            # detach() and contiguous() make new tensor objects: only when needed.
            if t.requires_grad:
                t = t.detach()
            capsules.append(_to_dlpack(t if t.is_contiguous() else t.contiguous()))
        if self._cuda:
            stream = _raw_stream(self.device.index) if _raw_stream else \
                torch.cuda.current_stream(self.device).cuda_stream
            shapes = self._model.output_shapes(capsules, stream)
            outputs = []
            for k, (shape, dtype) in enumerate(zip(shapes, self._out_dtypes)):
                kept = self._kept.get(k) if reuse else None
                if kept is None or list(kept.shape) != list(shape):
                    kept = torch.empty(shape, dtype=dtype, device=self.device)
                    if reuse and k in self._kept_outputs:
                        self._kept[k] = kept
                outputs.append(kept)
            self._model.run_into(capsules, list(map(_to_dlpack, outputs)), stream)
        else:
            outputs = list(map(_from_dlpack, self._model.run(capsules)))
        if self._writebacks:
            with torch.no_grad():
                for k, o in self._writebacks:
                    tensors[k].copy_(outputs[o])
        return outputs

    # --- functions (a bundled model: `dynoc build A.mlir B.mlir ...`) ------
    def functions(self):
        """The model's functions in build order, each as (name, the names of
        the inputs a caller gives it); a model of one graph has one, ""."""
        return [(name, list(inputs)) for name, inputs in self._model.functions()]

    def call(self, function, *tensors):
        """Runs `function` of a bundled model (libdynrt's dynrt_context_call
        on this model's one call context): its inputs named
        `graph_N.output_K` come from function graph_N's last call(), the
        others are `tensors`, in the order functions() gives. Returns copies
        of its outputs, as a list. CPU models."""
        capsules = [dlpack.to_dlpack(t.detach().contiguous()) for t in tensors]
        return [dlpack.from_dlpack(c) for c in self._model.call(function, capsules)]

    # --- weights (docs/training.md: a step model's parameters, optimizer
    # state and learning rates) --------------------------------------------
    def weight_names(self):
        """The names of the tensors the model reads besides its inputs."""
        return self._model.weight_names()

    def derived_weights(self):
        """The names of the weights the model keeps something computed from:
        its prepare graphs' inputs (folded BatchNorms, packed convolution
        weights) and, in a model with a convolution kernel, every weight
        (those kernels keep packed weights by address). After an in-place
        change to one, bind_weight it again; other weights are read where
        they are bound on every run."""
        import json
        names = set()
        for g in json.loads(self._model.manifest()).get("graphs", []):
            if any(k.get("category") == "convolution" for k in g.get("kernels", ())):
                return set(self.weight_names())
            prepare = g.get("prepare") or []
            for p in [prepare] if isinstance(prepare, dict) else prepare:
                names.update(i["name"] for i in p.get("inputs", ()))
        return names

    def read_weight(self, name):
        """A copy of weight `name`'s current value (after the training steps
        run so far)."""
        return dlpack.from_dlpack(self._model.read_weight(name))

    def write_weight(self, name, value):
        """Sets weight `name` for later calls: a learning rate
        (`G['opt'].param_groups[0]['lr']`), a parameter. A Python number is a
        0-d tensor of the weight's dtype."""
        if not isinstance(value, torch.Tensor):
            value = torch.tensor(value, dtype=self.read_weight(name).dtype)
        self._model.write_weight(name, dlpack.to_dlpack(value.detach().contiguous()))

    def bind_weight(self, name, tensor):
        """Makes weight `name` live in `tensor`'s memory (no copy): later calls
        read it there, in-place updates of the weight by the model land there,
        and calling this again after changing `tensor` in place recomputes
        what the model precomputed from it. This model keeps `tensor` alive.
        `tensor` must be contiguous and of the weight's dtype and shape."""
        if not isinstance(tensor, torch.Tensor) or not tensor.is_contiguous():
            raise Error(f"bind_weight('{name}'): needs a contiguous torch.Tensor")
        self._model.bind_weight(name, dlpack.to_dlpack(tensor.detach()))
        self._bound[name] = tensor

    def save_weights(self, path):
        """Writes every weight's current value to a safetensors checkpoint."""
        self._model.save_weights(str(path))

    def load_weights(self, path):
        """Restores the weights a safetensors checkpoint holds."""
        self._model.load_weights(str(path))

    def __repr__(self):
        return f"dynoc.LoadedModel({self.path!r})"


def _indices(structure):
    """The graph output indices an output structure (docs/manifest.md)
    returns."""
    if isinstance(structure, dict):
        if "index" in structure and isinstance(structure["index"], int):
            yield structure["index"]
        for v in structure.values():
            yield from _indices(v)
    elif isinstance(structure, list):
        for v in structure:
            yield from _indices(v)


def load(path, cuda_graphs=True, weights=None, communicator=None):
    """Loads a model .so (and its weights) for calling from Python. A CUDA model
    loads onto the current CUDA device; `cuda_graphs=False` runs every call
    directly instead of replaying captured CUDA graphs. `weights` names another
    safetensors file to use instead of the model's own (its tensors are checked
    against the manifest; dynrt_model_load_with_weights). A model captured from
    a torch.distributed program runs its collectives through `communicator`
    (dynoc.TorchDistributedCommunicator(): the process groups torch.distributed
    has in this process; docs/distributed.md)."""
    return LoadedModel(path, cuda_graphs, weights, communicator)


def _require_runtime(what):
    if _dynrt is None:
        raise ImportError(f"{what} needs the _dynrt extension; run `bazel build //...` "
                          f"({_import_error})")


@contextlib.contextmanager
def profile(path):
    """Records a Chrome trace / Perfetto file of the dynoc-built code run inside
    the block (models from `dynoc.load` and `dynoc.compile`'s built code alike):
    one span per model run and one per kernel or library call, with the fusion
    group's aten ops and their source lines as arguments. Written to `path`
    when the block ends; open it in ui.perfetto.dev. As DYNOC_PROFILE=path does
    for a whole process (docs/runtime.md, "Profiling")."""
    _require_runtime("dynoc.profile")
    _dynrt.profile_start(os.fspath(path))
    try:
        yield
    finally:
        _dynrt.profile_stop()


_LOG_LEVELS = {"debug": 0, "info": 1, "warning": 2, "error": 3}


def set_runtime_log(callback, level="info"):
    """Sends libdynrt's log messages (models loaded, variants chosen, CUDA graph
    captures, profiles written) at `level` and above to `callback(level,
    message)`, level being "debug", "info", "warning" or "error"; None stops
    them. `dynoc.set_runtime_log(logging.getLogger("dynoc.runtime").info)`
    routes them to Python's logging."""
    _require_runtime("dynoc.set_runtime_log")
    if level not in _LOG_LEVELS:
        raise ValueError(f"dynoc.set_runtime_log: level must be one of {', '.join(_LOG_LEVELS)}, "
                         f"not {level!r}")
    if callback is None:
        _dynrt.set_log_callback(None)
        return
    names = {v: k for k, v in _LOG_LEVELS.items()}

    def forward(code, message):
        callback(names.get(code, "error"), message)
    _dynrt.set_log_callback(forward, _LOG_LEVELS[level])
    global _log_stopped_at_exit
    if not _log_stopped_at_exit:
        # libdynrt may log at exit, after Python is gone: stop before that.
        atexit.register(_dynrt.set_log_callback, None)
        _log_stopped_at_exit = True


_log_stopped_at_exit = False
