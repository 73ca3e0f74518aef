"""Causal attention in bf16, 2 x 4 heads, sequence 650, head dim 128, through PyTorch's
FlashAttention-2 backend (GPU test problem of the attention stage's `order flash2`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


class Model(nn.Module):
    def forward(self, q, k, v):
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 4, 650, 128, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
