"""KB L1 #16: GEMM (M, K, N) = (2048, 8192, 4096) with A stored K x M, used as A.T."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
K = 8192
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B)


def get_inputs():
    return [torch.rand(K, M), torch.rand(K, N)]


def get_init_inputs():
    return []
