"""KB L1 #33: nn.BatchNorm2d(64), training mode, on 64 x 64 x 512 x 512 fp32: statistics per channel."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
FEATURES = 64
DIM1 = 512
DIM2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.rand(BATCH, FEATURES, DIM1, DIM2)]


def get_init_inputs():
    return [FEATURES]
