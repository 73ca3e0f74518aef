"""KernelBench's triangular matmul at test size: tril(A @ B) of lower triangular 512 x 512 fp32 matrices."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    return [torch.tril(torch.randn(512, 512)), torch.tril(torch.randn(512, 512))]


def get_init_inputs():
    return []
