"""KB L2 #35: Conv2d 64 -> 128 (3x3) on 128 x 64 x 128 x 128, minus 0.5, hardswish, MaxPool2d(2), then Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = 3
HEIGHT = 128
WIDTH = 128
SUBTRACT = 0.5
POOL = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, subtract, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)
        self.subtract = subtract
        self.pool = nn.MaxPool2d(pool)

    def forward(self, x):
        x = F.hardswish(self.conv(x) - self.subtract)
        return F.mish(self.pool(x))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, SUBTRACT, POOL]
