"""KB L1 #5: 'matmul' that is A * s with a Python float forward argument (65536 x 16384): elementwise, 4 GiB."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 65536
N = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s


def get_inputs():
    return [torch.rand(M, N), 3.14]


def get_init_inputs():
    return []
