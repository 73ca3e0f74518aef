"""KB L1 #76: Conv1d 64 -> 128, kernel 3, stride 3, dilation 4, no bias, on 32 x 64 x 524280 (KernelBench's batch 64 halved: its 8.6 GB input would exceed 4 GiB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
IN_CHANNELS = 64
OUT_CHANNELS = 128
KERNEL = 3
STRIDE = 3
DILATION = 4
LENGTH = 524280


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, dilation):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel, stride=stride, dilation=dilation, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, LENGTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, DILATION]
