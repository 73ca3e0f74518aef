"""KB L1 #50: Conv2d 3 -> 96, 11x11 kernel, stride 4, padding 2, with bias, on 256 x 3 x 224 x 224 (AlexNet's first layer): Cin = 3 gives K = 363."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 256
IN_CHANNELS = 3
OUT_CHANNELS = 96
KERNEL = 11
STRIDE = 4
PADDING = 2
HEIGHT = 224
WIDTH = 224


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel, stride=stride, padding=padding)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, PADDING]
