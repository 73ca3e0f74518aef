"""KB L2 #1: Conv2d 64 -> 128 (3x3, with bias) on 128 x 64 x 128 x 128, ReLU, then plus a randn (128, 1, 1) bias parameter."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = 3
HEIGHT = 128
WIDTH = 128
BIAS_SHAPE = (OUT_CHANNELS, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = torch.relu(self.conv(x))
        return x + self.bias


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, BIAS_SHAPE]
