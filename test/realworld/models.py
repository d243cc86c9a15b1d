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
_DEC = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64)
_SEQ2SEQ = dict(vocab_size=128, d_model=32, encoder_layers=2, decoder_layers=2,
                encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                decoder_ffn_dim=64, max_position_embeddings=64)

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
    # more encoders, decoders (use_cache on: past_key_values come back), encoder-decoders,
    # vision and speech (issue #18)

    ("deberta", "DebertaConfig", "DebertaModel", _TEXT, "text_mask"),
    ("deberta-v2", "DebertaV2Config", "DebertaV2Model", _TEXT, "text_mask"),
    ("xlm-roberta", "XLMRobertaConfig", "XLMRobertaModel", dict(_TEXT, pad_token_id=1), "text_mask"),
    ("camembert", "CamembertConfig", "CamembertModel", dict(_TEXT, pad_token_id=1), "text_mask"),
    ("mpnet", "MPNetConfig", "MPNetModel", dict(_TEXT, pad_token_id=1), "text_mask"),
    ("roformer", "RoFormerConfig", "RoFormerModel", dict(_TEXT, embedding_size=32), "text_mask"),
    ("squeezebert", "SqueezeBertConfig", "SqueezeBertModel", dict(_TEXT, embedding_size=32), "text_mask"),
    ("convbert", "ConvBertConfig", "ConvBertModel", dict(_TEXT, embedding_size=32), "text_mask"),
    ("ernie", "ErnieConfig", "ErnieModel", _TEXT, "text_mask"),
    ("funnel", "FunnelConfig", "FunnelModel", dict(vocab_size=128, block_sizes=[1, 1], d_model=32, n_head=4, d_head=8, d_inner=64), "text_mask"),
    ("megatron-bert", "MegatronBertConfig", "MegatronBertModel", _TEXT, "text_mask"),
    ("data2vec-text", "Data2VecTextConfig", "Data2VecTextModel", dict(_TEXT, pad_token_id=1), "text_mask"),
    ("layoutlm", "LayoutLMConfig", "LayoutLMModel", _TEXT, "text_mask"),
    ("bloom", "BloomConfig", "BloomModel", dict(vocab_size=128, hidden_size=32, n_layer=2, n_head=4), "text_mask"),
    ("gptj", "GPTJConfig", "GPTJModel", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64), "text_mask"),
    ("gpt-neox", "GPTNeoXConfig", "GPTNeoXModel", dict(_TEXT), "text_mask"),
    ("codegen", "CodeGenConfig", "CodeGenModel", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64, n_ctx=64), "text_mask"),
    ("falcon", "FalconConfig", "FalconModel", dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4), "text_mask"),
    ("phi", "PhiConfig", "PhiModel", dict(_DEC), "text_mask"),
    ("gemma", "GemmaConfig", "GemmaModel", dict(_DEC, head_dim=8), "text_mask"),
    ("stablelm", "StableLmConfig", "StableLmModel", dict(_DEC), "text_mask"),
    ("biogpt", "BioGptConfig", "BioGptModel", dict(_TEXT), "text_mask"),
    ("xglm", "XGLMConfig", "XGLMModel", dict(vocab_size=128, d_model=32, num_layers=2, attention_heads=4, ffn_dim=64, max_position_embeddings=64), "text_mask"),
    ("olmo", "OlmoConfig", "OlmoModel", dict(_DEC), "text_mask"),
    ("starcoder2", "Starcoder2Config", "Starcoder2Model", dict(_DEC), "text_mask"),
    ("gpt-bigcode", "GPTBigCodeConfig", "GPTBigCodeModel", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=4, n_positions=64), "text_mask"),
    ("mixtral", "MixtralConfig", "MixtralModel", dict(_DEC, num_local_experts=4, num_experts_per_tok=2), "text_mask"),
    ("t5", "T5Config", "T5Model", dict(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4), "seq2seq"),
    ("t5-lm-labels", "T5Config", "T5ForConditionalGeneration", dict(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, decoder_start_token_id=0, pad_token_id=0), "seq2seq_labels"),
    ("bart", "BartConfig", "BartModel", _SEQ2SEQ, "seq2seq"),
    ("mbart", "MBartConfig", "MBartModel", _SEQ2SEQ, "seq2seq"),
    ("pegasus", "PegasusConfig", "PegasusModel", _SEQ2SEQ, "seq2seq"),
    ("marian", "MarianConfig", "MarianModel", dict(_SEQ2SEQ, decoder_start_token_id=0, pad_token_id=0), "seq2seq"),
    ("blenderbot-small", "BlenderbotSmallConfig", "BlenderbotSmallModel", _SEQ2SEQ, "seq2seq"),
    ("m2m100", "M2M100Config", "M2M100Model", _SEQ2SEQ, "seq2seq"),
    ("deit", "DeiTConfig", "DeiTModel", dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64), "pixels32"),
    ("beit", "BeitConfig", "BeitModel", dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64), "pixels32"),
    ("swin", "SwinConfig", "SwinModel", dict(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4), "pixels32"),
    ("convnextv2", "ConvNextV2Config", "ConvNextV2Model", dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2), "pixels32"),
    ("segformer", "SegformerConfig", "SegformerModel", dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32], num_attention_heads=[1, 2], patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]), "pixels32"),
    ("poolformer", "PoolFormerConfig", "PoolFormerModel", dict(num_encoder_blocks=2, depths=[1, 1], hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1]), "pixels32"),
    ("dinov2", "Dinov2Config", "Dinov2Model", dict(image_size=32, patch_size=8, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2), "pixels32"),
    ("bit", "BitConfig", "BitModel", dict(embedding_size=64, hidden_sizes=[128, 256], depths=[1, 1]), "pixels32"),
    ("mobilenet-v2", "MobileNetV2Config", "MobileNetV2Model", dict(image_size=32, depth_multiplier=0.25), "pixels32"),
    ("efficientnet", "EfficientNetConfig", "EfficientNetModel", dict(image_size=32, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320), "pixels32"),
    ("wav2vec2", "Wav2Vec2Config", "Wav2Vec2Model", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2), "audio"),
    ("hubert", "HubertConfig", "HubertModel", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2), "audio"),
    ("whisper", "WhisperConfig", "WhisperModel", dict(vocab_size=128, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16, max_target_positions=32, pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=3), "whisper"),
]

# The fast subset CI runs (tools/test.sh runs it; --realworld runs all).
CI_SUBSET = ["bert-seqcls-labels", "gpt2-lm-labels", "resnet", "t5", "wav2vec2"]

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
"seq2seq": """
ids = torch.randint(3, 128, (2, 12), generator=g)
mask = torch.ones(2, 12, dtype=torch.long)
mask[1, 8:] = 0
kwargs = dict(input_ids=ids, attention_mask=mask,
              decoder_input_ids=torch.randint(3, 128, (2, 6), generator=g))
""",
    "seq2seq_labels": """
ids = torch.randint(3, 128, (2, 12), generator=g)
mask = torch.ones(2, 12, dtype=torch.long)
mask[1, 8:] = 0
kwargs = dict(input_ids=ids, attention_mask=mask,
              labels=torch.randint(3, 128, (2, 6), generator=g))
""",
    "audio": """
kwargs = dict(input_values=torch.randn(2, 800, generator=g))
""",
    "whisper": """
kwargs = dict(input_features=torch.randn(2, 16, 32, generator=g),
              decoder_input_ids=torch.randint(3, 128, (2, 6), generator=g))
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
