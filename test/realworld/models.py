"""The real-program suite's models: architectures from transformers (PyPI,
installed at test time, random weights from a config: nothing is downloaded),
each called as its documentation calls it.

A model is (name, build, inputs, call): `build` makes the module from a small
config of the real architecture, `inputs` the example batch (token ids with an
attention mask, labels where the task head takes them, pixel values), `call`
how the docs call it. run_suite.py writes each as a standalone script.
"""

# Small configs: the architecture, layer structure and ops are the real ones;
# widths and depths are cut so that a capture + build takes seconds.
_TEXT = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=64, max_position_embeddings=64)

MODELS = [
    # name, config class, model class, config kwargs, input kind
    ("bert", "BertConfig", "BertModel", _TEXT, "text_mask"),
    ("bert-seqcls-labels", "BertConfig", "BertForSequenceClassification", _TEXT, "text_labels"),
    ("roberta", "RobertaConfig", "RobertaModel", dict(_TEXT, pad_token_id=1), "text_mask"),
    ("distilbert", "DistilBertConfig", "DistilBertModel",
     dict(vocab_size=128, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=64),
     "text_mask"),
    ("albert", "AlbertConfig", "AlbertModel", dict(_TEXT, embedding_size=16), "text_mask"),
    ("electra", "ElectraConfig", "ElectraModel", dict(_TEXT, embedding_size=16), "text_mask"),
    ("gpt2", "GPT2Config", "GPT2Model",
     dict(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64), "text_mask"),
    ("gpt2-lm-labels", "GPT2Config", "GPT2LMHeadModel",
     dict(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64), "lm_labels"),
    ("gpt-neo", "GPTNeoConfig", "GPTNeoModel",
     dict(vocab_size=128, hidden_size=32, num_layers=2, num_heads=4, max_position_embeddings=64,
          attention_types=[[["global", "local"], 1]], window_size=8), "text_mask"),
    ("opt", "OPTConfig", "OPTModel",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          ffn_dim=64, max_position_embeddings=64, word_embed_proj_dim=32), "text_mask"),
    ("llama", "LlamaConfig", "LlamaModel",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64), "text_mask"),
    ("mistral", "MistralConfig", "MistralModel",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64), "text_mask"),
    ("qwen2", "Qwen2Config", "Qwen2Model",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64), "text_mask"),
    ("vit", "ViTConfig", "ViTModel",
     dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          intermediate_size=64), "pixels32"),
    ("vit-cls-labels", "ViTConfig", "ViTForImageClassification",
     dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          intermediate_size=64, num_labels=5), "pixels32_labels"),
    ("resnet", "ResNetConfig", "ResNetModel",
     dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="bottleneck"),
     "pixels32"),
    ("convnext", "ConvNextConfig", "ConvNextModel",
     dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2), "pixels32"),
    ("regnet-grouped", "RegNetConfig", "RegNetModel",
     dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8),
     "pixels32"),
    ("mobilebert", "MobileBertConfig", "MobileBertModel",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
          intermediate_size=64, embedding_size=16, intra_bottleneck_size=16,
          true_hidden_size=16, max_position_embeddings=64, num_feedforward_networks=1),
     "text_mask"),
]

# The fast subset CI runs (tools/test.sh runs it; --realworld runs all).
CI_SUBSET = ["bert-seqcls-labels", "gpt2-lm-labels", "resnet"]

_INPUTS = {
    "text_mask": """
ids = torch.randint(0, 128, (2, 12), generator=g)
mask = torch.ones(2, 12, dtype=torch.long)
mask[1, 8:] = 0
kwargs = dict(input_ids=ids, attention_mask=mask)
""",
    "text_labels": """
ids = torch.randint(0, 128, (2, 12), generator=g)
mask = torch.ones(2, 12, dtype=torch.long)
mask[1, 8:] = 0
kwargs = dict(input_ids=ids, attention_mask=mask, labels=torch.tensor([0, 1]))
""",
    "lm_labels": """
ids = torch.randint(0, 128, (2, 12), generator=g)
kwargs = dict(input_ids=ids, attention_mask=torch.ones(2, 12, dtype=torch.long), labels=ids)
""",
    "pixels32": """
kwargs = dict(pixel_values=torch.randn(2, 3, 32, 32, generator=g))
""",
    "pixels32_labels": """
kwargs = dict(pixel_values=torch.randn(2, 3, 32, 32, generator=g), labels=torch.tensor([1, 3]))
""",
}

_SCRIPT = '''\
# Generated by test/realworld/run_suite.py: {name} ({model_cls}) called as its
# documentation calls it, compiled with torch.compile.
import torch
import transformers

torch.manual_seed(0)
g = torch.Generator().manual_seed(1)
config = transformers.{config_cls}(**{config!r})
model = transformers.{model_cls}(config).eval()
{inputs}
compiled = torch.compile(model)
with torch.no_grad():
    out = compiled(**kwargs)
for key, value in out.items():
    if isinstance(value, torch.Tensor):
        print(key, tuple(value.shape), f"{{value.float().abs().sum().item():.4f}}")
'''


def script(name):
    for n, config_cls, model_cls, config, kind in MODELS:
        if n == name:
            return _SCRIPT.format(name=n, config_cls=config_cls, model_cls=model_cls,
                                  config=config, inputs=_INPUTS[kind].strip())
    raise KeyError(name)

# Models whose graph or break counts differ from Dynamo's, and why.
KNOWN_DIFFERENCES = {
    "gpt2-lm-labels": "fewer breaks than Dynamo: the loss path calls transformers' "
                      "logger.warning_once, library code dynoc runs natively (it prints as "
                      "in eager); Dynamo breaks there (logging.Logger methods), twice",
}
