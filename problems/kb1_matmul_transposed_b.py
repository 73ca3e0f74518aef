"""KB L1 #17: GEMM (M, K, N) = (2048, 8192, 4096) with B stored N x K, used as B.T."""

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
        return torch.matmul(A, B.T)


def get_inputs():
    return [torch.rand(M, K), torch.rand(N, K)]


def get_init_inputs():
    return []
