"""KB L1 #35: nn.GroupNorm(8, 64) on 112 x 64 x 512 x 512 fp32: 2M-element groups, affine."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 112
FEATURES = 64
GROUPS = 8
DIM1 = 512
DIM2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.rand(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return [FEATURES, GROUPS]
