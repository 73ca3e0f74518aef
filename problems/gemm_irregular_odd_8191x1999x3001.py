"""Odd-sized fp32 GEMM (8191x1999, K=3001): no dimension aligned to 16 bytes, tests predication and alignment fallbacks."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 8191
N = 1999
K = 3001


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
