"""3-D tensor times a matrix (16x1024x2048 @ 2048x768): batch dims fold into M."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 16
S = 1024
K = 2048
N = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.matmul(x, w)


def get_inputs():
    x = torch.randn(B, S, K)
    w = torch.randn(K, N)
    return [x, w]


def get_init_inputs():
    return []
