"""Large-K fp32 GEMM (512x512, K=262144): tiny output, needs split-K or stream-K to fill the GPU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512
N = 512
K = 262144


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
