"""fp32 matrix-vector product, 16384 x 8192 times a vector (GPU test problem of `schedule gemv32`):
PyTorch 2.11 on the H200 runs cuBLAS's gemv2T_kernel_val<..., 128, 16, 4, 4> on it without a
split, the order runtime/gemv.cuh reproduces with groups of 32 in one chunk."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, v):
        return torch.matmul(a, v)


def get_inputs():
    return [torch.randn(16384, 8192), torch.randn(8192, 1)]


def get_init_inputs():
    return []
