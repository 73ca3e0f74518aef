"""KB L1 #64: ConvTranspose1d 128 -> 128, kernel 3, stride 1, no bias, on 64 x 128 x 65536."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
IN_CHANNELS = 128
OUT_CHANNELS = 128
KERNEL = 3
LENGTH = 65536


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
