"""KB L1 #91: reverse cumsum written as x.flip(dim).cumsum(dim).flip(dim) on 32768 x 32768 fp32."""

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
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [1]
