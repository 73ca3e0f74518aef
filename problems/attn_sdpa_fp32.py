"""scaled_dot_product_attention in fp32, 16 x 32 heads, sequence 1024, head dim 128 (non-causal)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 16
H = 32
L = 1024
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, L, D)
    k = torch.randn(B, H, L, D)
    v = torch.randn(B, H, L, D)
    return [q, k, v]


def get_init_inputs():
    return []
