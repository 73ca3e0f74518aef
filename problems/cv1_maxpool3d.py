"""KB L1 #43: MaxPool3d, 3x3x3 window, stride 2, padding 1, dilation 3, on 16 x 32 x 128^3 (a 4 GiB input, KernelBench's size kept)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
CHANNELS = 32
DIM1 = 128
DIM2 = 128
DIM3 = 128
KERNEL = 3
STRIDE = 2
PADDING = 1
DILATION = 3


class Model(nn.Module):
    def __init__(self, kernel, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, DIM1, DIM2, DIM3)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING, DILATION]
