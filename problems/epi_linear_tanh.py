"""Linear + tanh on an irregular shape (3000 x 5000 -> 4000)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 3000
K = 5000
N = 4000


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.tanh(self.linear(x))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
