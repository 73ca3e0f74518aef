"""LayerNorm (nn.LayerNorm) over the 8192 features of 16384 rows: the transformer hidden-dim case."""

import torch
import torch.nn as nn

ROWS = 16384
FEAT = 8192


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(ROWS, FEAT)]


def get_init_inputs():
    return [FEAT]
