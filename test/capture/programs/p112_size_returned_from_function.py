# A size read in one function and returned to its caller, alone or in a tuple
# (transformers' mask helpers return `kv_length, kv_offset` that way, and the
# caller compares it with the mask's width): the int keeps naming the size
# across `return`, so the decision is one on sizes and the second length makes
# the graph dynamic instead of a second static graph.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect stderr: are dynamic now
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch
import torch.nn.functional as F


def prepare(x, mask):
    mask = mask.to(device=x.device, dtype=torch.bool)
    kv_length, kv_offset = mask.shape[-1], 0
    return False, mask, x.shape[1], kv_length, kv_offset


def width(t):
    return t.shape[-1]


def pad_mask(mask, kv_length, kv_offset):
    if (padding := kv_length + kv_offset - mask.shape[-1]) > 0:
        mask = F.pad(mask, (0, padding))
    return mask


@torch.compile
def f(x, mask):
    early, mask, q_length, kv_length, kv_offset = prepare(x, mask)
    mask = pad_mask(mask, kv_length, kv_offset)
    if width(mask) != q_length:
        raise ValueError("mask and input lengths differ")
    return x * mask.unsqueeze(-1)


for t in (5, 9, 12):
    print(tuple(f(torch.randn(2, t, 4), torch.ones(2, t)).shape))
