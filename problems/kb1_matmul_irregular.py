"""KB L1 #8: irregular fp32 GEMM (M, K, N) = (8205, 2949, 5921): odd sizes, no 16-byte-aligned rows."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 8205
K = 2949
N = 5921


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
