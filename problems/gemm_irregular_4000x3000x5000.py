"""Irregular fp32 GEMM (4000x3000, K=5000): no dimension a multiple of 128."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4000
N = 3000
K = 5000


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
