"""Matrix-vector product (8192x262144 times a vector): memory-bound, reads A once."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 8192
K = 262144


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, v):
        return torch.matmul(a, v)


def get_inputs():
    a = torch.randn(M, K)
    v = torch.randn(K, 1)
    return [a, v]


def get_init_inputs():
    return []
