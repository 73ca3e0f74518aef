"""KB L1 #44: AvgPool1d, kernel 8, stride 1, padding 4 (zero padding counted), on 64 x 128 x 65536."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
CHANNELS = 128
LENGTH = 65536
KERNEL = 8
STRIDE = 1
PADDING = 4


class Model(nn.Module):
    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size=kernel, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, LENGTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
