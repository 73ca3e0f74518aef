"""Small-K fp32 GEMM (16384x16384, K=32): output-write bound, one k-tile per output tile."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 16384
N = 16384
K = 32


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
