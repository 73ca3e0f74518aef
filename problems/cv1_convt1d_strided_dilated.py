"""KB L1 #79: ConvTranspose1d 32 -> 64, kernel 3, stride 2, padding 1, dilation 2, no bias, on 16 x 32 x 131072."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL = 3
STRIDE = 2
PADDING = 1
DILATION = 2
LENGTH = 131072


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding, dilation):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel, stride=stride, padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, PADDING, DILATION]
