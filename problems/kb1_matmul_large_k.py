"""KB L1 #6: large-K fp32 GEMM (256 x 256, K = 524288): a 256 KiB output needs split-K to fill the GPU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
N = 256
K = 524288


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
