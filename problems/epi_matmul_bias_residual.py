"""A @ B + bias row vector + residual C (4096x4096x4096): epilogue with two broadcast/tensor operands."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
N = 4096
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, bias, c):
        return a @ b + bias + c


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    bias = torch.randn(N)
    c = torch.randn(M, N)
    return [a, b, bias, c]


def get_init_inputs():
    return []
