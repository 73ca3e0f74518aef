"""KB L1 #36: RMS norm over dim 1 (64 channels) of 112 x 64 x 512 x 512 fp32: not the last dim."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 112
FEATURES = 64
DIM1 = 512
DIM2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.rand(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return [FEATURES]
