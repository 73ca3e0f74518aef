"""KB L1 #9: outer-product-like GEMM (32768 x 32) @ (32 x 32768): K = 32, a 4 GiB output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 32768
N = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, N), torch.rand(N, M)]


def get_init_inputs():
    return []
