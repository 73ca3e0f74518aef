"""KB L1 #14: triu(A @ B) of upper-triangular 4096 x 4096 inputs: a triangle mask after the GEMM."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.triu(torch.matmul(A, B))


def get_inputs():
    return [torch.triu(torch.rand(N, N)), torch.triu(torch.rand(N, N))]


def get_init_inputs():
    return []
