"""KB L1 #55: Conv2d 64 -> 128, 3x3, no bias, on an asymmetric 8 x 64 x 512 x 1024 input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = 3
HEIGHT = 512
WIDTH = 1024


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (kernel, kernel), bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
