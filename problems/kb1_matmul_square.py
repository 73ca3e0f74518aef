"""KB L1 #1: square fp32 GEMM 4096^3 on torch.rand inputs: the v0.1 size of KernelBench's first problem."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
