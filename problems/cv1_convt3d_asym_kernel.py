"""KB L1 #68: ConvTranspose3d 32 -> 64, 3x5x5 kernel, stride 1, no bias, on 16 x 32 x 64^3 (output 66 x 68 x 68)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL = (3, 5, 5)
DEPTH = 64
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
