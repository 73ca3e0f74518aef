"""Prefix sum of the elements selected by a boolean mask (cumsum of x * mask)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.randn(ROWS, COLS)
    mask = torch.randint(0, 2, (ROWS, COLS)).bool()
    return [x, mask]


def get_init_inputs():
    return []
