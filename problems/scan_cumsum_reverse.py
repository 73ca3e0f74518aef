"""Reverse prefix sum along rows (flip, cumsum, flip)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
