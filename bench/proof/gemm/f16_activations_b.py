"""f16 Linear + bias with silu, sigmoid, mish, softplus, erf-GELU and leaky ReLU summed."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(N, N, dtype=torch.float16)

    def forward(self, x):
        h = self.fc(x)
        return (F.silu(h) + torch.sigmoid(h) + F.mish(h) + F.softplus(h) + F.gelu(h)
                + F.leaky_relu(h, 0.2))


def get_inputs():
    return [torch.randn(N, N, dtype=torch.float16)]


def get_init_inputs():
    return []
