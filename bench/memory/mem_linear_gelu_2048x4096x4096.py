"""Linear + GELU (erf) at 2048 rows, 4096 -> 4096: a fresh shape for the memory-transfer pass."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
K = 4096
N = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.gelu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
