"""KB L1 #45: AvgPool2d, 11x11 window, stride 11, on 4 x 64 x 2048 x 2048 (a quarter of KernelBench's batch 16: its 17 GB input would exceed 4 GiB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4
CHANNELS = 64
HEIGHT = 2048
WIDTH = 2048
KERNEL = 11


class Model(nn.Module):
    def __init__(self, kernel):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL]
