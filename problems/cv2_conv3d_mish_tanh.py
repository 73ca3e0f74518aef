"""KB L2 #47: Conv3d 32 -> 64 (3x3x3) on 16 x 32 x 32 x 64 x 64, then Mish, then tanh: a two-transcendental epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
IN_CHANNELS = 32
OUT_CHANNELS = 64
KERNEL = 3
DEPTH = 32
HEIGHT = 64
WIDTH = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel)

    def forward(self, x):
        return torch.tanh(F.mish(self.conv(x)))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
