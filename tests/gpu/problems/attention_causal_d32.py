"""Causal attention in fp32 of head dim 32 (GPU test problem): not fused (the attention stage takes
head dims 64 and 128), so the mask is a softmax prologue, and in row 0 every lane but one sees
only masked (-inf) scores."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(2, 2, 256, 32) for _ in range(3)]


def get_init_inputs():
    return []
