import torch, torch.nn.functional as F, dynoc, sys
from torch.profiler import profile, ProfilerActivity
def attend(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=k.shape[1] != q.shape[1])
fn = dynoc.compile(attend)
for (b, hq, hkv, t, d) in [(8, 12, 12, 512, 64), (8, 32, 8, 1024, 128)]:
    q = torch.randn(b, hq, t, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, hkv, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    with torch.no_grad():
        for _ in range(3): fn(q, k, v)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5): fn(q, k, v)
            torch.cuda.synchronize()
    print((b, hq, hkv, t, d), dict(dynoc.counters))
    print(prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=8, max_name_column_width=60))
