"""Linear + ReLU at 4096 rows, 2048 -> 8192: a fresh shape for the memory-transfer pass."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 2048
N = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return F.relu(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
