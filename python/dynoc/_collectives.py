"""torch.distributed under dynoc: the in-place collectives a script calls
(`dist.all_reduce(t)`, `dist.broadcast(t, src)`, `dist.all_gather_into_tensor`,
`dist.reduce_scatter_tensor`, `dist.all_to_all_single`), while a region records, become the functional
collective, its wait and a copy back into the tensor (what Dynamo does), so the
recorder sees ops it can write as the dynoc dialect's (CollectiveOps.td) and
the tensor's new value as an in-place update. Outside a region, and for calls
it cannot rewrite (async_op=True, a group dynoc cannot name), the original
function runs: the recorder then sees the process-group op and the region
breaks there, with the reason.

The run-time half, libdynrt communicators, is runtime/communicators.py.
"""
import functools

import torch

from . import _region
from .runtime.communicators import group_name as _group_name

_REDUCE_OPS = {"SUM": "sum", "AVG": "avg", "PRODUCT": "product", "MIN": "min", "MAX": "max"}
_ROUTED = False


def _reduce_name(op):
    import torch.distributed as dist
    for name, short in _REDUCE_OPS.items():
        if op == getattr(dist.ReduceOp, name):
            return short
    return None


def _recording():
    """Whether dynoc's evaluator runs a region (its recorder is listening)."""
    return _region.capturing > 0


def route_inplace_collectives():
    """Wraps torch.distributed's in-place collectives (once per process)."""
    global _ROUTED
    if _ROUTED:
        return
    _ROUTED = True
    import torch.distributed as dist
    from torch.distributed import distributed_c10d as c10d
    funcol = torch.ops._c10d_functional

    def wrap(name, rewrite):
        original = getattr(c10d, name, None)
        if original is None:
            return  # not in this torch

        @functools.wraps(original)
        def call(*args, **kwargs):
            if _recording():
                done = rewrite(*args, **kwargs)
                if done is not NotImplemented:
                    return done
            return original(*args, **kwargs)
        for module in (dist, c10d):
            if getattr(module, name, None) is original:
                setattr(module, name, call)

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        reduce_op, group_name = _reduce_name(op), _group_name(group)
        if async_op or reduce_op is None or group_name is None:
            return NotImplemented
        tensor.copy_(funcol.wait_tensor(funcol.all_reduce(tensor, reduce_op, group_name)))
        return None

    def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
        group_name = _group_name(group)
        if async_op or group_name is None or src is None or group_src is not None:
            return NotImplemented
        group_src = src if group is None else dist.get_group_rank(group, src)
        tensor.copy_(funcol.wait_tensor(funcol.broadcast(tensor, group_src, group_name)))
        return None

    def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
        group_name = _group_name(group)
        if async_op or group_name is None:
            return NotImplemented
        size = dist.get_world_size(group)
        output_tensor.copy_(funcol.wait_tensor(
            funcol.all_gather_into_tensor(input_tensor, size, group_name)).view_as(output_tensor))
        return None

    def reduce_scatter_tensor(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
        reduce_op, group_name = _reduce_name(op), _group_name(group)
        if async_op or reduce_op is None or group_name is None:
            return NotImplemented
        size = dist.get_world_size(group)
        output.copy_(funcol.wait_tensor(
            funcol.reduce_scatter_tensor(input, reduce_op, size, group_name)).view_as(output))
        return None

    def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                          group=None, async_op=False):
        group_name = _group_name(group)
        if async_op or group_name is None:
            return NotImplemented
        size = dist.get_world_size(group)
        equal = [input.shape[0] // size] * size
        output.copy_(funcol.wait_tensor(funcol.all_to_all_single(
            input, list(output_split_sizes or equal), list(input_split_sizes or equal),
            group_name)).view_as(output))
        return None

    wrap("all_reduce", all_reduce)
    wrap("all_to_all_single", all_to_all_single)
    wrap("broadcast", broadcast)
    wrap("all_gather_into_tensor", all_gather_into_tensor)
    wrap("reduce_scatter_tensor", reduce_scatter_tensor)
    # Their newer names (torch 2.13 deprecates the ones above).
    wrap("all_gather_single", all_gather_into_tensor)
    wrap("reduce_scatter_single", reduce_scatter_tensor)
    route_ddp()


# --- DistributedDataParallel ------------------------------------------------
#
# While a region records, a DDP module's forward runs its wrapped module
# directly (DDP's reducer is not prepared, so its autograd hooks do nothing),
# after broadcasting its buffers from rank 0 as DDP does; and each parameter
# gets a gradient hook that replaces the gradient the backward computes by its
# average over the DDP group (a functional all-reduce and its wait), before
# it is accumulated into .grad. The recorder writes those all-reduces into
# the backward graph, so a step over a DDP module is one graph with the
# gradient averaging in it (docs/distributed.md says how this differs from
# Dynamo's DDPOptimizer and compiled autograd).

def _ddp_forward(original):
    import torch.distributed as dist

    @functools.wraps(original)
    def forward(self, *inputs, **kwargs):
        if not _recording() or not torch.is_grad_enabled() or \
                getattr(self, "_delay_all_reduce_all_params", False):
            self._dynoc_average = False  # DDP's own reducer averages
            return original(self, *inputs, **kwargs)
        group = self.process_group if self.process_group is not None else dist.group.WORLD
        if getattr(self, "require_forward_param_sync", True) and \
                getattr(self, "broadcast_buffers", False) and len(self.modules_buffers):
            for b in self.modules_buffers:  # DDP's buffer sync: rank 0's
                dist.broadcast(b, src=dist.get_global_rank(group, 0), group=group)
        if self.require_backward_grad_sync and not getattr(self, "_dynoc_hooks", None):
            name = _group_name(group)
            self._dynoc_hooks = [
                p.register_hook(_averaging_hook(self, p, name))
                for p in self.module.parameters() if p.requires_grad]
        self._dynoc_average = self.require_backward_grad_sync
        return self.module(*inputs, **kwargs)
    return forward


def _averaging_hook(ddp, param, group_name):
    funcol = torch.ops._c10d_functional

    def hook(grad):
        if not getattr(ddp, "_dynoc_average", False):
            return grad
        if param.grad is None:
            return funcol.wait_tensor(funcol.all_reduce(grad, "avg", group_name))
        # Gradients accumulated under no_sync(): DDP averages the whole sum,
        # so what is accumulated is that average less what .grad holds.
        total = grad + param.grad
        return funcol.wait_tensor(funcol.all_reduce(total, "avg", group_name)) - param.grad
    return hook


def route_ddp():
    """Wraps DistributedDataParallel.forward (once per process)."""
    from torch.nn.parallel import DistributedDataParallel
    if not getattr(DistributedDataParallel.forward, "_dynoc", False):
        DistributedDataParallel.forward = _ddp_forward(DistributedDataParallel.forward)
        DistributedDataParallel.forward._dynoc = True
