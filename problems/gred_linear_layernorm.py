"""Linear then LayerNorm over the 8192 features: mean and variance of a full output row."""

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
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        return self.norm(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
