"""nn.LayerNorm over (C, H, W) of a 4-D input (GPU export test): the lowering declares x [4, 8, 32, 32] folded."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.ln = nn.LayerNorm(shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(4, 8, 32, 32)]


def get_init_inputs():
    return [(8, 32, 32)]
