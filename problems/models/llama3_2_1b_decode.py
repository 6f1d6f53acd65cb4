"""Llama-3.2-1B's decoder (transformers' own LlamaModel: embedding, 4 of its 16 layers, final RMSNorm; random weights, SDPA attention), one decode step of 32 sequences over a KV cache of 4096 tokens: memory-bound (~1.6 GB of cache and weights read)."""
# Configuration: meta-llama/Llama-3.2-1B's published config.json (hidden 2048, intermediate 8192, 32 heads, 8 KV
# heads, head_dim 64, vocab 128256, rms_norm_eps 1e-5, rope_theta 500000 with llama3 rope scaling: factor 32,
# low/high frequency factors 1/4, original context 8192), cut to num_layers of its 16 layers. No download: the
# weights are the library's random initialisation. The cache arrives as two tensor inputs, every layer's keys and
# values stacked (num_layers, batch, kv heads, past_len, head_dim), and forward() builds transformers' DynamicCache
# from them, as generate() holds it between steps; the step appends the new token's keys and values (a copy of the
# cache, as DynamicCache's concatenation does) and attends over past_len + 1 keys.
# Needs the `transformers` extra (pip install 'kerntailor[transformers]').
import torch
import torch.nn as nn

try:
    from transformers import DynamicCache, LlamaConfig, LlamaModel
except ImportError as e:
    raise ImportError(f"this model needs transformers (pip install 'kerntailor[transformers]'): {e}") from None

batch_size = 32
past_len = 4096
vocab_size = 128256
hidden_size = 2048
intermediate_size = 8192
num_heads = 32
num_kv_heads = 8
num_layers = 4

# head_dim = hidden_size // num_heads stays a power of two; the odd variant has an odd cache, batch, vocab and MLP
VARIANTS = {
    "small": {"batch_size": 2, "past_len": 16, "vocab_size": 256, "hidden_size": 64, "intermediate_size": 128,
              "num_heads": 4, "num_kv_heads": 2},
    "odd": {"batch_size": 3, "past_len": 13, "vocab_size": 301, "hidden_size": 96, "intermediate_size": 200,
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

    def forward(self, input_ids: torch.Tensor, past_keys: torch.Tensor, past_values: torch.Tensor) -> torch.Tensor:
        # input_ids (B, 1); past_keys, past_values (layers, B, kv heads, past_len, head_dim)
        cache = DynamicCache([(past_keys[i], past_values[i]) for i in range(past_keys.shape[0])],
                             config=self.model.config)
        return self.model(input_ids=input_ids, past_key_values=cache, use_cache=True).last_hidden_state  # (B, 1, hidden)


def get_inputs():
    head_dim = hidden_size // num_heads
    cache_shape = (num_layers, batch_size, num_kv_heads, past_len, head_dim)
    return [torch.randint(0, vocab_size, (batch_size, 1)), torch.randn(cache_shape), torch.randn(cache_shape)]


def get_init_inputs():
    return [vocab_size, hidden_size, intermediate_size, num_heads, num_kv_heads, num_layers]
