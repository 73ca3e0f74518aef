"""LayerNorm over the last two dims (16 x 64 x 256 x 256 -> normalized [256, 256])."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 16
FEAT = 64
D1 = 256
D2 = 256


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(B, FEAT, D1, D2)]


def get_init_inputs():
    return [(D1, D2)]
