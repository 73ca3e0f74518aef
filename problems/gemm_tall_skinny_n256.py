"""Tall-skinny fp32 GEMM (65536x256, K=4096): few output columns, tiles must split M well."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 65536
N = 256
K = 4096


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
