"""The same GEMM with PyTorch's TF32 switched on (cuBLAS TF32 tensor cores), flag restored after."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def forward(self, a, b):
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = True
        try:
            return a @ b.T
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
