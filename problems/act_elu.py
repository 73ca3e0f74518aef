"""ELU(alpha=1) elementwise on 1 GiB of fp32."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 16384
COLS = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.elu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
