"""fp32 Linear 2048^3 + bias + ReLU computed with fp32 SIMT FMAs (no tensor cores at all)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(N, N)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(N, N)]


def get_init_inputs():
    return []
