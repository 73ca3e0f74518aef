"""fp16 GEMM (4096x8192, K=4096): half precision inputs and output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
N = 8192
K = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a @ b


def get_inputs():
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []
