"""KB L1 #84: depthwise Conv2d (128 groups), 3x3, no bias, on 64 x 128 x 256 x 512 (a 4 GiB input, KernelBench's size kept)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 128
KERNEL = 3
HEIGHT = 256
WIDTH = 512


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, (kernel, kernel), groups=channels, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [CHANNELS, KERNEL]
