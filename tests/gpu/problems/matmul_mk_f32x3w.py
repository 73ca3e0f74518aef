"""A matmul with A given transposed, A.T [4096, 300] -> A [300, 4096] @ B.T, B [1000, 4096]: A is
M-major. f32x3w runs it on its register-sourced main loop (the register copy gathers A's fragments
from an M-major stage; B stays K-major)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, At, B):
        return torch.matmul(At.T, B.T)


def get_inputs():
    return [torch.rand(4096, 300), torch.rand(1000, 4096)]


def get_init_inputs():
    return []
