"""KB L1 #82: depthwise Conv2d (64 groups of one channel), 3x3, no bias, on 16 x 64 x 512 x 512: 9 MACs per output, memory bound."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
CHANNELS = 64
KERNEL = 3
HEIGHT = 512
WIDTH = 512


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel, groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
