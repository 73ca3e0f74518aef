"""KB L1 #80: Conv2d 32 -> 64, 5x9 kernel, dilation (2, 3), padding (2, 4), no bias, on 8 x 32 x 512 x 512."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL = (5, 9)
PADDING = (2, 4)
DILATION = (2, 3)
HEIGHT = 512
WIDTH = 512


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, padding, dilation):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, PADDING, DILATION]
