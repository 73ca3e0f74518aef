"""Rectangular fp32 GEMM (M,N,K)=(2048,4096,8192): K twice the larger output side."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
N = 4096
K = 8192


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
