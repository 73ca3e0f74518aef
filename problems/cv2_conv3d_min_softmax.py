"""KB L2 #24: Conv3d 3 -> 24 (3x3x3) on 128 x 3 x 24 x 32 x 32, min over depth, then softmax over the 24 channels."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 3
OUT_CHANNELS = 24
KERNEL = 3
DEPTH = 24
HEIGHT = 32
WIDTH = 32
DIM = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel)
        self.dim = dim

    def forward(self, x):
        x = torch.min(self.conv(x), dim=self.dim)[0]
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, DIM]
