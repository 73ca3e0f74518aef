"""Max value and index over each column (torch.max with dim=0)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        values, indices = torch.max(x, dim=0)
        return values, indices


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
