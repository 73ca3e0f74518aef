"""KB L1 #60: Conv3d 3 -> 64 with an asymmetric 3x5x7 kernel, no bias, on 16 x 3 x 64^3."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 3
OUT_CHANNELS = 64
KERNEL = (3, 5, 7)
DEPTH = 64
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
