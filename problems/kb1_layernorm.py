"""KB L1 #40: nn.LayerNorm((64, 256, 256)) on 16 x 64 x 256 x 256 fp32: 16 rows of 4M elements."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
FEATURES = 64
DIM1 = 256
DIM2 = 256


class Model(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.rand(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return [(FEATURES, DIM1, DIM2)]
