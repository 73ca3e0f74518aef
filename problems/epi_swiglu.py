"""SwiGLU: silu(x @ W1^T) * (x @ W2^T) (4096 x 4096 -> 11008): two GEMMs sharing A, multiplied in the epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 4096
K = 4096
N = 11008


class Model(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return F.silu(self.gate(x)) * self.up(x)


def get_inputs():
    return [torch.randn(M, K)]


def get_init_inputs():
    return [K, N]
