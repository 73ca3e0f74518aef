"""KB L1 #63: Conv2d 16 -> 128, 3x3, no bias, on 8 x 16 x 1024 x 1024 (KernelBench's batch 16 halved: its 8.6 GB output would exceed 4 GiB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 16
OUT_CHANNELS = 128
KERNEL = 3
HEIGHT = 1024
WIDTH = 1024


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, (kernel, kernel), bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
