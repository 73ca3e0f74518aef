"""Square fp32 GEMM C = A @ B, 4096^3: the baseline tensor-core tile shape."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    return [a, b]


def get_init_inputs():
    return []
