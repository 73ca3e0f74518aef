"""Linear (no bias) + a per-column bias parameter + sigmoid: broadcast vector epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 8192
N = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(out_features) * 0.02)

    def forward(self, x):
        return torch.sigmoid(self.linear(x) + self.bias)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
