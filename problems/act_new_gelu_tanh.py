"""GELU tanh formula written out in PyTorch ops: seven elementwise ops, one fused kernel expected."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 8192
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        c = 0.7978845608028654
        return 0.5 * x * (1.0 + torch.tanh(c * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
