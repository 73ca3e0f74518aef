"""Linear, scaled by 2, clamped to [-1, 1]: scalar multiply then clamp epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 8192
N = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.clamp(self.linear(x) * 2.0, min=-1.0, max=1.0)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
