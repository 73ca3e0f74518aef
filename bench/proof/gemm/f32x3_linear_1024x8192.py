"""fp32 Linear 1024x8192 -> 8192 (nn.Linear init, U[0,1) input): fp32-faithful GEMM + bias at 1e-4."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 1024
K = 8192
N = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.rand(M, K)]


def get_init_inputs():
    return []
