"""KB L1 #46: AvgPool3d, 3x3x3 window, stride 2, padding 1, on 8 x 32 x 128 x 128 x 256 (KernelBench's batch 16 halved: its 8.6 GB input would exceed 4 GiB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
CHANNELS = 32
DEPTH = 128
HEIGHT = 128
WIDTH = 256
KERNEL = 3
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
