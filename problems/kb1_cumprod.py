"""KB L1 #90: torch.cumprod along rows of 32768 torch.rand values: products underflow to zero early."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 32768


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [1]
