"""Linear, mean over each row (keepdim), then GELU of the mean: reduction followed by elementwise."""

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
        return F.gelu(self.linear(x).mean(dim=1, keepdim=True))


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
