"""nn.Linear without bias (4096 rows, 8192 -> 8192): GEMM with a parameter operand."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 8192
N = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
