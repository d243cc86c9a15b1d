"""transformers' generate() with the model's forward compiled, as its docs
show: the default dynamic cache (`torch.compile(model.forward)`) or the
static-cache recipe (`cache_implementation="static"`, `mode="reduce-overhead",
fullgraph=True`). A small model of each architecture from its config (random
weights, no download); prints the greedy tokens of two prompts.

  hf_generate.py ARCH {dynamic,static} [NEW_TOKENS]
"""
import sys

import torch
import transformers as T

SMALL = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
CONFIGS = {
    "llama": lambda: T.LlamaConfig(**SMALL),
    "qwen2": lambda: T.Qwen2Config(**SMALL),
    "phi3": lambda: T.Phi3Config(pad_token_id=0, **SMALL),
    "gemma": lambda: T.GemmaConfig(head_dim=16, **SMALL),
    "mistral": lambda: T.MistralConfig(**SMALL),
    "gpt2": lambda: T.GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=4,
                                 bos_token_id=0, eos_token_id=0),
    "gpt_neox": lambda: T.GPTNeoXConfig(vocab_size=128, hidden_size=64, intermediate_size=128,
                                        num_hidden_layers=2, num_attention_heads=4),
    "opt": lambda: T.OPTConfig(vocab_size=128, hidden_size=64, ffn_dim=128, num_hidden_layers=2,
                               num_attention_heads=4, word_embed_proj_dim=64),
    # encoder-decoders: the encoder runs once, the decoder steps with a cache
    "t5": lambda: T.T5Config(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                             num_heads=4, decoder_start_token_id=0, pad_token_id=0),
    "bart": lambda: T.BartConfig(vocab_size=128, d_model=64, encoder_layers=2, decoder_layers=2,
                                 encoder_attention_heads=4, decoder_attention_heads=4,
                                 encoder_ffn_dim=128, decoder_ffn_dim=128),
}
SEQ2SEQ = {"t5", "bart"}


def main():
    arch, cache = sys.argv[1], sys.argv[2]
    new = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    torch.manual_seed(0)
    auto = T.AutoModelForSeq2SeqLM if arch in SEQ2SEQ else T.AutoModelForCausalLM
    model = auto.from_config(CONFIGS[arch]()).eval()
    if cache == "static":
        model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=True)
        extra = dict(cache_implementation="static")
    else:
        model.forward = torch.compile(model.forward)
        extra = {}
    for length in (7, 5, 6):
        prompt = torch.randint(1, 128, (1, length))
        with torch.no_grad():
            out = model.generate(prompt, max_new_tokens=new, min_new_tokens=new, do_sample=False,
                                 **extra)
        print(arch, cache, out[0, 0 if arch in SEQ2SEQ else length:].tolist())


if __name__ == "__main__":
    main()
