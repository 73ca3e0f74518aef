"""Batched A @ B^T with transpose(-1, -2) (attention-score shape): 256 x (2048x2048, K=128)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 256
L = 2048
D = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        return torch.matmul(q, k.transpose(-1, -2))


def get_inputs():
    q = torch.randn(B, L, D)
    k = torch.randn(B, L, D)
    return [q, k]


def get_init_inputs():
    return []
