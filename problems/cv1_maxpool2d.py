"""KB L1 #42: MaxPool2d, 4x4 window, stride 1, padding 1, on 32 x 64 x 512 x 512: overlapping windows."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
CHANNELS = 64
HEIGHT = 512
WIDTH = 512
KERNEL = 4
STRIDE = 1
PADDING = 1


class Model(nn.Module):
    def __init__(self, kernel, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING]
