"""KB L1 #3: torch.bmm of 128 independent (512 x 1024) @ (1024 x 2048) products."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
M = 512
K = 1024
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    return [torch.rand(BATCH, M, K), torch.rand(BATCH, K, N)]


def get_init_inputs():
    return []
