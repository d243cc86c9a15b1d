"""Python numbers that are tensor sizes, where an op takes them as operands
(docs/capture.md, "Sizes used as numbers"): a size beside a tensor in an
operator becomes a 0-d input of the graph rather than a pinned constant, and
torch's pad of an attention mask to an aligned length, sliced back off, is
the mask itself. A mixin of the recorder's Tracker (capture/recorder.py)."""
import torch

from . import guards as _guards
from .graph import Value


class SizeOperands:
    def enter_operand_size(self, value, source):
        self.operand_sizes.append([value, source, False])

    def exit_operand_size(self):
        value, source, used = self.operand_sizes.pop()
        if not used:  # an attribute (`x ** n`), say: pinned as before
            self.on_guard(source, value)

    def _size_operand(self, v):
        """The graph input that Python number `v` in an op's Tensor slot is,
        when it is the size an operator was given beside a tensor
        (`torch.arange(q) + cache.get_seq_length()`): a 0-d int64 input the
        compiled call reads from the size's source, so no guard pins its
        value. None for any other number (a constant then)."""
        if not self.operand_sizes or type(v) is not int:
            return None
        entry = self.operand_sizes[-1]
        value, source, _ = entry
        if v != value or not _guards.is_size_input(source):
            return None
        entry[2] = True
        key = (id(self.current), source)
        nv = self.size_inputs.get(key)
        if nv is None:
            nv = self.current.add_input((), torch.int64, "user", source)
            self.size_inputs[key] = nv
            if self.examples is not None:
                self.examples[nv.vid] = torch.tensor(v)
        return nv

    def _unpadded(self, func, operands, args, kwargs):
        """The Value a slice gives back when it cuts a trailing constant pad
        off again (`pad(m, (0, k))[..., :n]`: torch pads an attention mask
        to an aligned length for its CUDA kernels and slices it back): the
        unpadded tensor, the same values. The pad's amount depends on the
        length modulo the alignment, so recording the pair would pin it.
        None for any other op."""
        if func is not torch.ops.aten.slice.Tensor or not operands:
            return None
        pad = self.producers.get(operands[0].vid)
        if pad is None or pad.op != "aten.constant_pad_nd" or pad.call is None or \
                callable(pad.call):
            return None
        x, amounts = pad.call[1][0], list(pad.call[1][1])
        if not isinstance(x, Value) or len(amounts) != 2 or amounts[0] != 0 or not x.shape:
            return None
        names = [a.name for a in func._schema.arguments]
        bound = dict(zip(names, args), **kwargs)
        rank = len(x.shape)
        dim, start = bound.get("dim", 0), bound.get("start")
        end, step = bound.get("end"), bound.get("step", 1)
        if dim % rank != rank - 1 or start not in (None, 0) or step != 1 or \
                end != x.shape[-1]:
            return None
        self.alignment_pads.add(id(pad))  # unused then: neither built nor replayed
        return x
