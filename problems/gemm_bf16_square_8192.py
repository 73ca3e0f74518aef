"""Square bf16 GEMM 8192^3: native tensor-core precision, fp32 accumulation expected."""

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
        return a @ b


def get_inputs():
    a = torch.randn(M, K, dtype=torch.bfloat16)
    b = torch.randn(K, N, dtype=torch.bfloat16)
    return [a, b]


def get_init_inputs():
    return []
