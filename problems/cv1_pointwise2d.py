"""KB L1 #87: pointwise (1x1) Conv2d 64 -> 128, no bias, on 8 x 64 x 1024 x 1024 (KernelBench's batch 16 halved: its 8.6 GB output would exceed 4 GiB): a GEMM over channels."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 64
OUT_CHANNELS = 128
HEIGHT = 1024
WIDTH = 1024


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS]
