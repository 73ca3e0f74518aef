"""RMS normalisation written out (x * rsqrt(mean(x^2) + eps) * w) over 8192 features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 32768
DIM = 8192


class Model(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        rms = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * rms * self.weight


def get_inputs():
    return [torch.randn(ROWS, DIM)]


def get_init_inputs():
    return [DIM, 1e-6]
