"""KB L1 #53: torch.min(x, dim=1)[0] over the middle dim of 128 x 4096 x 4095 fp32."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
DIM1 = 4096
DIM2 = 4095


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    return [torch.rand(BATCH, DIM1, DIM2)]


def get_init_inputs():
    return [1]
