"""Max value over each column of 16384 x 16384 fp32 (amax, dim 0): a strided column reduction."""

import torch
import torch.nn as nn

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def forward(self, x):
        return torch.amax(x, dim=0)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
