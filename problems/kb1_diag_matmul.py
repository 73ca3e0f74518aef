"""KB L1 #12: torch.diag(a) @ B (4096 x 4096): a dense GEMM on paper, a row scaling in truth."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096
M = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, B):
        return torch.diag(a) @ B


def get_inputs():
    return [torch.rand(N), torch.rand(N, M)]


def get_init_inputs():
    return []
