"""KB L1 #56: Conv2d 64 -> 128 with an asymmetric 5x7 kernel, no bias, on an asymmetric 8 x 64 x 512 x 256 input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = (5, 7)
HEIGHT = 512
WIDTH = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
