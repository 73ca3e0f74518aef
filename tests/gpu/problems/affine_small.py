"""y = x * w + b with a row broadcast (GPU harness test problem, 2048 x 1024)."""
import torch
import torch.nn as nn

ROWS, COLS = 2048, 1024


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.w = nn.Parameter(torch.randn(cols))
        self.b = nn.Parameter(torch.randn(cols))

    def forward(self, x):
        return x * self.w + self.b


def get_inputs():
    return [torch.rand(ROWS, COLS)]


def get_init_inputs():
    return [COLS]
