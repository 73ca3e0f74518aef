"""Attention in f16 with 200 queries over 333 keys, head dims 128 (q, k) and 64 (v), scale 0.05
(GPU test problem of the fused attention stage: tails in both sequences, Dv != D)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, scale=0.05)


def get_inputs():
    return [torch.randn(3, 2, 200, 128, dtype=torch.float16), torch.randn(3, 2, 333, 128, dtype=torch.float16),
            torch.randn(3, 2, 333, 64, dtype=torch.float16)]


def get_init_inputs():
    return []
