"""A batch of A^T @ B with A [L, K, M] and B [L, K, N]: neither operand is K-major where the GEMM
reads it (A transposed, B N-contiguous), and M, N and K are not multiples of 32. 3xTF32 on TF32
wgmma (f32x3s) runs it: its split stages copy each operand's parts into the transpose."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a.transpose(1, 2), b)


def get_inputs():
    return [torch.rand(3, 200, 1000), torch.rand(3, 200, 520)]


def get_init_inputs():
    return []
