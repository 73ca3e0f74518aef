"""Causal scaled_dot_product_attention in bf16, 8 x 32 heads, sequence 4096, head dim 128."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
H = 32
L = 4096
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    q = torch.randn(B, H, L, D, dtype=torch.bfloat16)
    k = torch.randn(B, H, L, D, dtype=torch.bfloat16)
    v = torch.randn(B, H, L, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []
