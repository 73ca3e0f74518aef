"""KB L1 #75: ConvTranspose2d 32 -> 64, 3x5 kernel, stride (2, 3), padding (1, 2), dilation (2, 1), 4 groups, no bias, on 16 x 32 x 128 x 256."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL = (3, 5)
STRIDE = (2, 3)
PADDING = (1, 2)
DILATION = (2, 1)
GROUPS = 4
HEIGHT = 128
WIDTH = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding, dilation, groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel, stride=stride, padding=padding, dilation=dilation,
                                       groups=groups, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, PADDING, DILATION, GROUPS]
