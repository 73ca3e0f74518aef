"""KB L2 #21: Conv2d 8 -> 32 (3x3) on 128 x 8 x 256 x 256, plus a randn bias, times a randn scale (per channel), sigmoid, GroupNorm(8 groups)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 8
OUT_CHANNELS = 32
KERNEL = 3
HEIGHT = 256
WIDTH = 256
GROUPS = 8
BIAS_SHAPE = (OUT_CHANNELS, 1, 1)
SCALE_SHAPE = (OUT_CHANNELS, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, groups, bias_shape, scale_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        x = (self.conv(x) + self.bias) * self.scale
        return self.norm(torch.sigmoid(x))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, GROUPS, BIAS_SHAPE, SCALE_SHAPE]
