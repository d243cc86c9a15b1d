"""libdynrt communicators from Python (dynrt_communicator_t,
docs/distributed.md), for `dynoc.load(path, communicator=...)`:
TorchDistributedCommunicator over a torch.distributed process group, and
libdynrt's own NCCL and gloo communicators set up through one."""
import collections
import ctypes
import os

import torch

from .model import _dynrt, _require_runtime


def group_name(group):
    """The name of a torch.distributed group (default: the default group), as
    graphs name it, or None."""
    import torch.distributed as dist
    g = group if group is not None else dist.group.WORLD
    return getattr(g, "group_name", None)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_GROUP_SIZE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
_ALL_REDUCE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.POINTER(_DLTensor), ctypes.c_int, ctypes.c_void_p,
                               ctypes.POINTER(ctypes.c_void_p))
_GATHER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                           ctypes.POINTER(_DLTensor), ctypes.POINTER(_DLTensor), ctypes.c_void_p,
                           ctypes.POINTER(ctypes.c_void_p))
_SCATTER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                            ctypes.POINTER(_DLTensor), ctypes.POINTER(_DLTensor), ctypes.c_int,
                            ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_BROADCAST = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                              ctypes.POINTER(_DLTensor), ctypes.c_int, ctypes.c_void_p,
                              ctypes.POINTER(ctypes.c_void_p))
_WAIT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
_ALL_TO_ALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                               ctypes.POINTER(_DLTensor), ctypes.POINTER(_DLTensor),
                               ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64),
                               ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
_LAST_ERROR = ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_void_p)
_GRAPH_REPLAY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int)


class _Communicator(ctypes.Structure):
    """dynrt_communicator_t (lib/runtime/include/dynrt/dynrt.h)."""
    _fields_ = [("abi_version", ctypes.c_int), ("self", ctypes.c_void_p),
                ("group_size", _GROUP_SIZE), ("all_reduce", _ALL_REDUCE),
                ("all_gather", _GATHER), ("reduce_scatter", _SCATTER),
                ("broadcast", _BROADCAST), ("wait", _WAIT), ("all_to_all", _ALL_TO_ALL),
                ("last_error", _LAST_ERROR), ("graph_replay", _GRAPH_REPLAY)]


_ABI_VERSION = 3
# dynrt_reduce_op_t, in order.
_REDUCE_BY_CODE = ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
_DTYPES = {(2, 32): torch.float32, (2, 64): torch.float64, (2, 16): torch.float16,
           (4, 16): torch.bfloat16, (0, 64): torch.int64, (0, 32): torch.int32,
           (0, 8): torch.int8, (1, 8): torch.uint8, (6, 8): torch.bool}


def _as_torch(t):
    """A torch tensor over the memory of DLTensor `t` (no copy)."""
    dt = t.dtype
    dtype = _DTYPES.get((dt.code, dt.bits))
    if dtype is None:
        raise TypeError(f"DLPack dtype code {dt.code} bits {dt.bits}")
    shape = [t.shape[i] for i in range(t.ndim)]
    numel = 1
    for d in shape:
        numel *= d
    item = torch.empty((), dtype=dtype).element_size()
    address = t.data + t.byte_offset
    if t.device.device_type == 1:  # kDLCPU
        raw = (ctypes.c_uint8 * (numel * item)).from_address(address) if numel else bytearray()
        return torch.frombuffer(raw, dtype=dtype, count=numel).view(shape) if numel \
            else torch.empty(shape, dtype=dtype)
    if t.device.device_type == 2:  # kDLCUDA

        class _Interface:
            __cuda_array_interface__ = {
                "shape": tuple(shape), "typestr": _typestr(dtype),
                "data": (address, False), "version": 2, "strides": None}
        return torch.as_tensor(_Interface(), device=f"cuda:{t.device.device_id}")
    raise TypeError(f"DLPack device type {t.device.device_type}")


def _typestr(dtype):
    return {torch.float32: "<f4", torch.float64: "<f8", torch.float16: "<f2",
            torch.int64: "<i8", torch.int32: "<i4", torch.int8: "|i1", torch.uint8: "|u1",
            torch.bool: "|b1", torch.bfloat16: "<V2"}[dtype]


def _gather_single():
    import torch.distributed as dist
    return getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def _scatter_single():
    import torch.distributed as dist
    return getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


_exit_hook = False
_FINISHED_KEPT = 64  # finished collectives a TorchDistributedCommunicator holds


def _destroy_process_groups_at_exit():
    """atexit: destroys the process groups a TorchDistributedCommunicator ran
    collectives on, if the program left them initialized. torch's worker
    threads (gloo's run loop, NCCL's watchdog) drop their last reference to
    a finished collective's Work a moment after wait() returns; that drops
    the Python tensors it held, which needs the GIL, and once the interpreter
    is finalizing, taking the GIL ends the thread inside a destructor: the
    process aborts with `terminate called without an active exception`
    (pytorch/pytorch#190489; torch's docs ask programs to call
    destroy_process_group before they exit). Destroying the groups here,
    while the interpreter is whole, joins those threads first."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


class TorchDistributedCommunicator:
    """A libdynrt communicator over torch.distributed: a built model's
    collectives run as `torch.distributed` calls on the process groups torch
    names as the graph does (the default group is "0" in every process), so
    gloo, NCCL or any backend the caller initialized carries them. Pass it to
    `dynoc.load(path, communicator=...)`.

    Each collective is issued with async_op=True and its torch Work is the
    handle the model waits for at the graph's wait_tensor, so the model
    computes while it is in flight (gloo's threads on the CPU). On a GPU the
    collective is issued with the model's stream as torch's current stream,
    so NCCL's stream waits for the model's queued kernels, and the wait makes
    the model's stream wait for NCCL's: events, no host synchronization.

    cuda_graphs: whether a context's CUDA graphs may hold the model's
    collectives (captured through ProcessGroupNCCL, which records its kernels
    and events into the graph being captured, then replayed with it, with no
    call back into Python). None (the default): when the default process
    group's backend is NCCL. A replay is not watched by torch's watchdog: a
    rank that never replays its graph leaves the others waiting
    (libdynrt's own NCCL communicator bounds replays by its timeout)."""

    def __init__(self, cuda_graphs=None):
        import torch.distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("TorchDistributedCommunicator needs torch.distributed "
                               "initialized (dist.init_process_group)")
        global _exit_hook
        if not _exit_hook:
            import atexit
            atexit.register(_destroy_process_groups_at_exit)
            _exit_hook = True
        if cuda_graphs is None:
            cuda_graphs = dist.get_backend() == "nccl"
        self.cuda_graphs = bool(cuda_graphs)
        self._error = b""
        self._works = {}  # handle -> (torch Work, the stream it was issued on)
        # Finished Works, kept a while: torch's worker thread (gloo's run loop)
        # lets go of a Work a moment after wait() returns; if its reference
        # were the last, the thread would free the Python tensors the Work
        # holds, which needs the GIL, and at interpreter exit that aborts the
        # process (docs/reliability.md, "Exit under load"). Held here, the
        # last reference is this object's, dropped by a Python thread.
        self._finished = collections.deque(maxlen=_FINISHED_KEPT)
        self._next = 1
        self._streams = {}  # (stream address, device) -> torch.cuda.ExternalStream
        self._struct = _Communicator(
            _ABI_VERSION, None, _GROUP_SIZE(self._group_size), _ALL_REDUCE(self._all_reduce),
            _GATHER(self._all_gather), _SCATTER(self._reduce_scatter),
            _BROADCAST(self._broadcast), _WAIT(self._wait), _ALL_TO_ALL(self._all_to_all),
            _LAST_ERROR(self._last_error),
            # A null pointer: graphs with collectives run directly.
            _GRAPH_REPLAY(self._graph_replay) if self.cuda_graphs else _GRAPH_REPLAY())

    @property
    def address(self):
        """The address of the dynrt_communicator_t (valid while self lives)."""
        return ctypes.addressof(self._struct)

    def _fail(self, e):
        self._error = f"{type(e).__name__}: {e}".encode()
        return 1

    def _stream(self, stream, tensor):
        """The model's CUDA stream as a torch stream (None: the CPU's, or a
        caller with no stream)."""
        if not stream or tensor.device.device_type != 2:
            return None
        key = (stream, tensor.device.device_id)
        s = self._streams.get(key)
        if s is None:
            s = torch.cuda.ExternalStream(stream, device=f"cuda:{tensor.device.device_id}")
            self._streams[key] = s
        return s

    def _issue(self, stream, tensor, work, fn):
        """Runs fn() (a torch.distributed call with async_op=True) on the
        model's stream; its Work becomes the handle in *work."""
        try:
            s = self._stream(stream, tensor)
            if s is None:
                w = fn()
            else:
                with torch.cuda.stream(s):
                    w = fn()
            handle = self._next
            self._next += 1
            self._works[handle] = (w, s)
            work[0] = handle
            return 0
        except Exception as e:  # noqa: BLE001 - handed to libdynrt as the status
            work[0] = None
            return self._fail(e)

    def _graph_replay(self, _, stream, queued):
        # The captured collectives need nothing from Python at a replay.
        return 0

    def _wait(self, _, handle, stream):
        w, s = self._works.pop(handle, (None, None))
        if w is None:
            self._error = f"no collective in flight with handle {handle}".encode()
            return 1
        try:
            self._finished.append(w)
            if s is None:
                w.wait()
                # No model stream was given: done before the model goes on.
                if torch.cuda.is_available() and torch.cuda.is_initialized():
                    torch.cuda.current_stream().synchronize()
            else:
                with torch.cuda.stream(s):
                    w.wait()  # NCCL: the model's stream waits for NCCL's
            return 0
        except Exception as e:  # noqa: BLE001
            return self._fail(e)

    @staticmethod
    def _group(name):
        from torch.distributed import distributed_c10d as c10d
        return c10d._resolve_process_group(name.decode())

    def _group_size(self, _, name, size, rank):
        try:
            g = self._group(name)
            size[0], rank[0] = g.size(), g.rank()
            return 0
        except Exception as e:  # noqa: BLE001
            return self._fail(e)

    def _all_reduce(self, _, name, tensor, op, stream, work):
        import torch.distributed as dist
        t = tensor.contents
        return self._issue(stream, t, work, lambda: dist.all_reduce(
            _as_torch(t), op=getattr(dist.ReduceOp, _REDUCE_BY_CODE[op]),
            group=self._group(name), async_op=True))

    def _all_gather(self, _, name, inp, out, stream, work):
        i, o = inp.contents, out.contents
        return self._issue(stream, i, work, lambda: _gather_single()(
            _as_torch(o), _as_torch(i), group=self._group(name), async_op=True))

    def _reduce_scatter(self, _, name, inp, out, op, stream, work):
        import torch.distributed as dist
        i, o = inp.contents, out.contents
        return self._issue(stream, i, work, lambda: _scatter_single()(
            _as_torch(o), _as_torch(i), op=getattr(dist.ReduceOp, _REDUCE_BY_CODE[op]),
            group=self._group(name), async_op=True))

    def _broadcast(self, _, name, tensor, src, stream, work):
        import torch.distributed as dist
        t = tensor.contents

        def call():
            g = self._group(name)
            return dist.broadcast(_as_torch(t), src=dist.get_global_rank(g, src), group=g,
                                  async_op=True)
        return self._issue(stream, t, work, call)

    def _all_to_all(self, _, name, inp, out, in_counts, out_counts, stream, work):
        import torch.distributed as dist
        i, o = inp.contents, out.contents

        def call():
            g = self._group(name)
            n = g.size()
            return dist.all_to_all_single(
                _as_torch(o), _as_torch(i), output_split_sizes=[out_counts[k] for k in range(n)],
                input_split_sizes=[in_counts[k] for k in range(n)], group=g, async_op=True)
        return self._issue(stream, i, work, call)

    def _last_error(self, _):
        return self._error


class _LibdynrtCommunicator:
    """A communicator of libdynrt's own, made for a torch.distributed process
    group; `address` is its dynrt_communicator_t."""

    def _group(self, group, what):
        """The torch.distributed group (default: the default group) and its
        name, as the graphs name it."""
        import torch.distributed as dist
        _require_runtime(f"dynoc.{what}")
        g = group if group is not None else dist.group.WORLD
        name = group_name(g)
        if name is None:
            raise ValueError(f"dynoc.{what}: torch.distributed gives this process group "
                             "no name")
        return g, name

    def close(self):
        if getattr(self, "address", None):
            self._free(self.address)
            self.address = None

    def __del__(self):
        self.close()


class NcclCommunicator(_LibdynrtCommunicator):
    """libdynrt's own NCCL communicator (dynrt_nccl_communicator_create,
    docs/distributed.md) for a torch.distributed process group (default: the
    default group) of GPU ranks: the group's rank 0 makes the NCCL unique id
    and torch.distributed hands it to the others, then every rank joins.
    Collectives run on the communicator's own CUDA stream, ordered against
    the model's by events, without Python in the step. `timeout_s` bounds
    the rendezvous and every collective (one not done by then aborts the
    communicator; the model's later runs fail naming it). Pass it to
    `dynoc.load(path, communicator=...)`; close() (or the object's end)
    frees it, after the models that use it."""

    def __init__(self, group=None, timeout_s=600.0):
        import torch.distributed as dist
        g, name = self._group(group, "NcclCommunicator")
        box = [_dynrt.nccl_unique_id() if g.rank() == 0 else None]
        dist.broadcast_object_list(box, src=dist.get_global_rank(g, 0), group=g)
        self._free = _dynrt.nccl_communicator_free
        self.address = _dynrt.nccl_communicator(
            box[0], g.size(), g.rank(), torch.cuda.current_device(), name,
            int(timeout_s * 1000))


class GlooCommunicator(_LibdynrtCommunicator):
    """libdynrt's own gloo communicator (dynrt_gloo_communicator_create, in
    the plugin libdynrt_gloo.so; docs/distributed.md) for a torch.distributed
    process group (default: the default group) of CPU ranks: the group's
    rank 0 makes a fresh folder for gloo's file store and torch.distributed
    hands its path to the others, then every rank joins over TCP at
    `hostname` (default 127.0.0.1: ranks on one machine; give each rank's
    own address otherwise, and a `store` folder they share). Collectives run
    in libdynrt without Python in the step. `timeout_s` bounds the
    rendezvous and every collective. Pass it to `dynoc.load(path,
    communicator=...)`; close() (or the object's end) frees it, after the
    models that use it."""

    def __init__(self, group=None, timeout_s=600.0, hostname=None, store=None):
        import tempfile
        import torch.distributed as dist
        g, name = self._group(group, "GlooCommunicator")
        _default_gloo_plugin()
        box = [store or (tempfile.mkdtemp(prefix="dynrt-gloo-") if g.rank() == 0 else None)]
        if store is None:
            dist.broadcast_object_list(box, src=dist.get_global_rank(g, 0), group=g)
        self._free = _dynrt.gloo_communicator_free
        self.address = _dynrt.gloo_communicator(box[0], g.size(), g.rank(), name, hostname,
                                                int(timeout_s * 1000))
        if store is None:  # the folder made here goes once every rank has met
            dist.barrier(group=g)
            if g.rank() == 0:
                import shutil
                shutil.rmtree(box[0], ignore_errors=True)


def _default_gloo_plugin():
    """DYNRT_GLOO_PLUGIN, unless set: the plugin an installed wheel carries,
    else the checkout's bazel-bin one."""
    if os.environ.get("DYNRT_GLOO_PLUGIN"):
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the package
    for path in (os.path.join(here, "_lib", "libdynrt_gloo.so"),
                 os.path.join(here, "..", "..", "bazel-bin", "lib", "runtime",
                              "gloo", "libdynrt_gloo.so")):
        if os.path.exists(path):
            os.environ["DYNRT_GLOO_PLUGIN"] = os.path.abspath(path)
            return
