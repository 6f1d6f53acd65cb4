"""Llama-3.2-1B's decoder (transformers' own LlamaModel: embedding, 4 of its 16 layers, final RMSNorm; random weights, SDPA attention), prefill of 8 x 2048 tokens: compute-bound (~1.5 TFLOP)."""
# Configuration: meta-llama/Llama-3.2-1B's published config.json (hidden 2048, intermediate 8192, 32 heads, 8 KV
# heads, head_dim 64, vocab 128256, rms_norm_eps 1e-5, rope_theta 500000 with llama3 rope scaling: factor 32,
# low/high frequency factors 1/4, original context 8192), cut to num_layers of its 16 layers. No download: the
# weights are the library's random initialisation. Needs the `transformers` extra (pip install 'kerntailor[transformers]').
import torch
import torch.nn as nn

try:
    from transformers import DynamicCache, LlamaConfig, LlamaModel
except ImportError as e:
    raise ImportError(f"this model needs transformers (pip install 'kerntailor[transformers]'): {e}") from None

batch_size = 8
seq_len = 2048
vocab_size = 128256
hidden_size = 2048
intermediate_size = 8192
num_heads = 32
num_kv_heads = 8
num_layers = 4

# head_dim = hidden_size // num_heads stays a power of two; the odd variant has odd tokens, vocab and MLP width
VARIANTS = {
    "small": {"batch_size": 2, "seq_len": 16, "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128,
              "num_heads": 4, "num_kv_heads": 2},
    "odd": {"batch_size": 3, "seq_len": 13, "vocab_size": 301, "hidden_size": 96, "intermediate_size": 200,
            "num_heads": 6, "num_kv_heads": 2},
}


def llama_config(vocab_size, hidden_size, intermediate_size, num_heads, num_kv_heads, num_layers):
    return LlamaConfig(
        vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=intermediate_size,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_kv_heads,
        head_dim=hidden_size // num_heads, hidden_act="silu", max_position_embeddings=131072, rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False, use_cache=True,
        attn_implementation="sdpa")


class Model(nn.Module):
    def __init__(self, vocab_size, hidden_size, intermediate_size, num_heads, num_kv_heads, num_layers):
        super().__init__()
        self.model = LlamaModel(llama_config(vocab_size, hidden_size, intermediate_size, num_heads, num_kv_heads,
                                             num_layers))

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        # as generate() prefills: the prompt's keys and values written to a fresh cache (DynamicCache), which
        # the decode steps then read (llama3_2_1b_decode.py)
        cache = DynamicCache(config=self.model.config)
        return self.model(input_ids=input_ids, past_key_values=cache, use_cache=True).last_hidden_state  # (B, T, hidden)


def get_inputs():
    return [torch.randint(0, vocab_size, (batch_size, seq_len))]


def get_init_inputs():
    return [vocab_size, hidden_size, intermediate_size, num_heads, num_kv_heads, num_layers]
