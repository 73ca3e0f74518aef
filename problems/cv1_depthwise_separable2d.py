"""KB L1 #86: depthwise-separable Conv2d: depthwise 3x3 (padding 1) over 64 channels, then a 1x1 64 -> 128, no bias, on 16 x 64 x 512 x 512."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = 3
PADDING = 1
HEIGHT = 512
WIDTH = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, padding):
        super().__init__()
        self.depthwise = nn.Conv2d(in_channels, in_channels, kernel, padding=padding, groups=in_channels, bias=False)
        self.pointwise = nn.Conv2d(in_channels, out_channels, 1, bias=False)

    def forward(self, x):
        return self.pointwise(self.depthwise(x))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, PADDING]
