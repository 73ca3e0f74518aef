"""KB L1 #34: nn.InstanceNorm2d(64) on 112 x 64 x 512 x 512 fp32 (7 GiB): one mean and variance per (n, c) plane."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 112
FEATURES = 64
DIM1 = 512
DIM2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.inorm(x)


def get_inputs():
    return [torch.rand(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return [FEATURES]
