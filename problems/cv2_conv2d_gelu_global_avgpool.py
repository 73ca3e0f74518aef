"""KB L2 #67: Conv2d 8 -> 64 (3x3) on 128 x 8 x 256 x 256, GELU, then global average pooling (adaptive_avg_pool2d to 1) squeezed to 128 x 64: a mean over each channel."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 8
OUT_CHANNELS = 64
KERNEL = 3
HEIGHT = 256
WIDTH = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)

    def forward(self, x):
        x = F.gelu(self.conv(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return x.squeeze(-1).squeeze(-1)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
