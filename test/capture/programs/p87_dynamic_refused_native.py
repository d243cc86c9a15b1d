# mark_dynamic on a batch that nn.MultiheadAttention's Python path (run natively,
# not followed) turns into reshape sizes the evaluator does not see: the replay is
# refused with the reason, the first graph stays static, and the second batch size
# merges it into a dynamic one as before.
# expect graphs: 1
# expect breaks: 0
# expect recompiles: 1
# expect stderr: stays static: aten._unsafe_view takes sizes from Python code the evaluator did not follow
# expect stderr: are dynamic now
# env: DYNOC_LOGS=recompiles
# dynamo: breaks<=
import torch

torch.manual_seed(0)
attn = torch.nn.MultiheadAttention(8, 2, batch_first=True).eval()


@torch.compile
def f(x):
    return attn(x, x, x, need_weights=False)[0].sum(-1)


for b in (2, 3):  # grad mode on: the Python path, F.multi_head_attention_forward
    x = torch.randn(b, 4, 8)
    torch._dynamo.mark_dynamic(x, 0)
    print(torch.allclose(f(x), attn(x, x, x, need_weights=False)[0].sum(-1), atol=1e-6))
