"""A matmul of two inputs, A [300, 4096] @ B [4096, 1000] with B N-major (as most KernelBench level-1
matmuls hold it), M and N ragged, K long enough (128 k-tiles) for the big x big product's
promotions. f32x3w runs it as the transposed product D.T = B.T A.T on its register-sourced main
loop (B's tiles in registers, M-major; A's the K-major operand; D written column-major)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(300, 4096), torch.rand(4096, 1000)]


def get_init_inputs():
    return []
