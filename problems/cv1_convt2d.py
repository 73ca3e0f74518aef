"""KB L1 #57: ConvTranspose2d 64 -> 64, 3x3, stride 1, no bias, on 8 x 64 x 1024 x 1024 (output 1026 x 1026)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 64
KERNEL = 3
HEIGHT = 1024
WIDTH = 1024


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
