"""Recording torch.distributed's functional collectives as ops of the dynoc
dialect (CollectiveOps.td): the recorder's (Tracker's) part for
_c10d_functional ops and the refusal, with its reason, of the process-group
ops it does not capture."""
import torch

from . import mlir_writer as mw
from .graph import Node, Value
from .values import _as_values

# The functional collectives recorded as dynoc ops (CollectiveOps.td).
_COLLECTIVES = {"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast",
                "all_to_all_single"}
# Each coalesced collective records as its single-tensor form per tensor (the
# same values; dynoc-bucket-all-reduces merges all-reduces again at build).
_COALESCED = {"all_reduce_coalesced": "all_reduce",
              "all_gather_into_tensor_coalesced": "all_gather_into_tensor",
              "reduce_scatter_tensor_coalesced": "reduce_scatter_tensor"}


def _group_size(group_name):
    """The number of ranks of the process group torch names `group_name`."""
    from torch.distributed import distributed_c10d as c10d
    try:
        return c10d._resolve_process_group(group_name).size()
    except Exception as e:  # noqa: BLE001 - said in the break's reason
        raise mw.Unencodable(f"process group '{group_name}' does not resolve ({e})")


class CollectiveRecording:
    """Tracker's collective recording (a mixin: it uses the recorder's
    values, lifting and current graph)."""

    def _record_collective(self, func, args, kwargs, out):
        """A functional collective (torch.distributed._functional_collectives,
        and the in-place torch.distributed calls that dynoc rewrites into
        them, _collectives.py) as an op of the dynoc dialect; the size of its
        group is recorded too (the runtime checks it against the
        communicator's). The in-place process-group ops (c10d::allreduce_ and
        the like: async_op=True, object collectives) are not captured."""
        namespace, short = func._schema.name.split("::", 1)
        if namespace == "c10d":
            raise mw.Unencodable(
                f"torch.distributed collective c10d.{short} on a process group "
                "(async_op=True, or a call dynoc does not rewrite into a functional "
                "collective): runs outside the graphs")
        bound = dict(zip((a.name for a in func._schema.arguments), args), **kwargs)
        attrs = {}
        if short in _COALESCED:
            single = getattr(torch.ops._c10d_functional, _COALESCED[short]).default
            rest = {k: v for k, v in bound.items() if k != "inputs"}
            if not isinstance(out, (list, tuple)) or len(out) != len(bound["inputs"]):
                raise mw.Unencodable(f"collective {short}: its results are not one per input")
            for tensor, result in zip(bound["inputs"], out):
                self._record_collective(single, (tensor,), rest, result)
            return
        if short in ("wait_tensor", "_wrap_tensor_autograd"):
            # The wrapper (an AsyncCollectiveTensor) waits at its first use:
            # here, which is no later.
            op = "dynoc.wait_tensor"
        elif short in _COLLECTIVES:
            op = "dynoc." + short
            group = bound["group_name"]
            size = _group_size(group)
            if "reduce_op" in bound:
                reduce_op = str(bound["reduce_op"]).lower()
                if reduce_op not in ("sum", "avg", "product", "min", "max"):
                    raise mw.Unencodable(f"collective reduce_op '{reduce_op}'")
                attrs["reduce_op"] = mw.string_attr(reduce_op)
            if "group_size" in bound and int(bound["group_size"]) != size:
                raise mw.Unencodable(f"{short} over group '{group}' with group_size "
                                     f"{bound['group_size']}, but the group has {size} ranks")
            if "src" in bound:
                attrs["src"] = f"{int(bound['src'])} : i64"
            for splits in ("output_split_sizes", "input_split_sizes"):
                if splits in bound:
                    sizes = [int(n) for n in (bound[splits] or [])]
                    attrs[splits] = "array<i64" + (": " + ", ".join(map(str, sizes))
                                                   if sizes else "") + ">"
            attrs["group_size"] = f"{size} : i64"
            attrs["group_name"] = mw.string_attr(str(group))
        else:
            raise mw.Unencodable(f"collective _c10d_functional.{short} is not supported yet")
        src = bound.get("input", bound.get("tensor", args[0] if args else None))
        if not isinstance(src, torch.Tensor) or not isinstance(out, torch.Tensor):
            raise mw.Unencodable(f"collective {short} of a tensor list")
        mw.element_type(out.dtype)
        operands = [self._lift(src)]
        call = (func, _as_values(args, self._value_of), _as_values(kwargs, self._value_of))
        v = Value(self.current, out.shape, out.dtype)
        self.values[id(out)] = v
        self._bind(out)
        self.tensor_ids.track(out)
        if self.examples is not None:
            self.result_tensors[v.vid] = out.detach().clone()
        self.current.nodes.append(Node(op, operands, attrs, None, [v], False, call,
                                       tuple(self.native_sizes)))
