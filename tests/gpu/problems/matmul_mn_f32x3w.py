"""A matmul with A given transposed and B N-major, A.T [4096, 300] -> A [300, 4096] @ B [4096, 1000]:
neither operand is K-major. f32x3w runs it on its register-sourced main loop with the split
transposing B's tiles (its slow form: the transposed product would make A's the N-major operand)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, At, B):
        return torch.matmul(At.T, B)


def get_inputs():
    return [torch.rand(4096, 300), torch.rand(4096, 1000)]


def get_init_inputs():
    return []
