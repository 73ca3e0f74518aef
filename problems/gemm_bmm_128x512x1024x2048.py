"""Batched fp32 GEMM torch.bmm: 128 independent (512x2048, K=1024) products."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 128
M = 512
N = 2048
K = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    a = torch.randn(B, M, K)
    b = torch.randn(B, K, N)
    return [a, b]


def get_init_inputs():
    return []
