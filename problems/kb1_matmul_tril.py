"""KB L1 #15: tril(A @ B) of lower-triangular 4096 x 4096 inputs: a triangle mask after the GEMM."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    return [torch.tril(torch.rand(N, N)), torch.tril(torch.rand(N, N))]


def get_init_inputs():
    return []
