"""y = x * w + b with a row broadcast (GPU harness test problem, 8192 x 8192: 256 MB per tensor, so t_SOL is far above launch overhead)."""
import torch
import torch.nn as nn

ROWS, COLS = 8192, 8192


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
