"""BatchNorm2d in eval mode (running statistics) on 32 x 128 x 128 x 128: a per-channel affine map."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 32
C = 128
H = 128
W = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return [C]
