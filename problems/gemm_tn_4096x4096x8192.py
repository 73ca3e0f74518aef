"""GEMM with A transposed in forward (A.T @ B, A stored K x M): column-major A operand."""

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
        return a.T @ b


def get_inputs():
    a = torch.randn(K, M)
    b = torch.randn(K, N)
    return [a, b]


def get_init_inputs():
    return []
