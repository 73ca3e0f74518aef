"""Causal attention in bf16, 2 x 4 heads, sequence 650 (not a multiple of the 128-key blocks), head
dim 64 (GPU test problem of the fused attention stage)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 4, 650, 64, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []
