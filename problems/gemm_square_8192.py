"""Square fp32 GEMM 8192^3: long-running, tests sustained throughput and wave quantization at scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 8192
N = 8192
K = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N)
    return [a, b]


def get_init_inputs():
    return []
