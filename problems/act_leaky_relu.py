"""LeakyReLU(0.01) elementwise on 1 GiB of fp32."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
