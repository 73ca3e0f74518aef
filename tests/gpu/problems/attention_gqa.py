"""Grouped-query causal attention in bf16: 2 x 8 query heads over 2 key/value heads, sequence 500,
head dim 128 (GPU test problem of the attention stage's key/value head mapping)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def get_inputs():
    q = torch.randn(2, 8, 500, 128, dtype=torch.bfloat16)
    k = torch.randn(2, 2, 500, 128, dtype=torch.bfloat16)
    v = torch.randn(2, 2, 500, 128, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []
