"""fp32 matrix-vector product, 8192 x 262144 times a vector (GPU test problem of `schedule gemv`):
the one shape where PyTorch 2.11 on the H200 is known to run cuBLAS's gemv2T_kernel_val<..., 128,
16, 2, 2> with a 132-way split-K reduce, the order runtime/gemv.cuh reproduces."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, v):
        return torch.matmul(a, v)


def get_inputs():
    return [torch.randn(8192, 262144), torch.randn(262144, 1)]


def get_init_inputs():
    return []
