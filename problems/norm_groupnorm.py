"""GroupNorm (32 groups) on a 16 x 256 x 128 x 128 activation."""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 16
C = 256
H = 128
W = 128


class Model(nn.Module):
    def __init__(self, num_groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(B, C, H, W)]


def get_init_inputs():
    return [32, C]
