"""KB L1 #4: matrix-vector product (2048 x 1048576) @ (1048576 x 1): an 8 GiB matrix read once, output a column."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
K = 1048576


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, 1)]


def get_init_inputs():
    return []
