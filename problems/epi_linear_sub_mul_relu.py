"""Linear, minus a constant, times a constant, then ReLU: a chain of scalar epilogue ops."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 8192
N = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features, sub, mul):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.sub = sub
        self.mul = mul

    def forward(self, x):
        y = self.linear(x)
        y = (y - self.sub) * self.mul
        return torch.relu(y)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N, 0.25, 1.5]
