"""KB L1 #10: 3-D tensor times a matrix (16 x 1024 x 2048) @ (2048 x 768): the batch folds into M."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
M = 1024
K = 2048
L = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    return [torch.rand(BATCH, M, K), torch.rand(K, L)]


def get_init_inputs():
    return []
