"""KB L2 #73: Conv2d 8 -> 64 (3x3) on 128 x 8 x 128 x 128, BatchNorm2d, times 2: eval mode here (our loader), so the norm folds into the epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 8
OUT_CHANNELS = 64
KERNEL = 3
HEIGHT = 128
WIDTH = 128
SCALE = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, scale):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)
        self.bn = nn.BatchNorm2d(out_channels)
        self.scale = scale

    def forward(self, x):
        return self.bn(self.conv(x)) * self.scale


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, SCALE]
