"""Linear + softplus(beta=2, threshold=10): epilogue with two scalar parameters."""

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
        return F.softplus(self.linear(x), beta=2.0, threshold=10.0)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
