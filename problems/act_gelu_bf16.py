"""Exact GELU on bf16 (16384 x 32768): half the bytes per element."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
