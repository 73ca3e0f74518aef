"""GEMM with both operands transposed (A.T @ B.T): both operands column-major."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
N = 4096
K = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a.T @ b.T


def get_inputs():
    a = torch.randn(K, M)
    b = torch.randn(N, K)
    return [a, b]


def get_init_inputs():
    return []
