"""Linear without bias + ELU(alpha=0.5)."""

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

    def forward(self, x):
        return F.elu(self.linear(x), alpha=0.5)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
