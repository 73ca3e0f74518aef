"""KB L1 #7: small-K fp32 GEMM (32768 x 32768, K = 64): bound by the 4 GiB output write."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 32768
N = 32768
K = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
