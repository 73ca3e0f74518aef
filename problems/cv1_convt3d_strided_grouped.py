"""KB L1 #72: ConvTranspose3d 32 -> 32, 3x5x7 kernel, stride 2, padding (1, 2, 3), output_padding 1, 4 groups, no bias, on 8 x 32 x 12 x 24 x 48."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
IN_CHANNELS = 32
OUT_CHANNELS = 32
KERNEL = (3, 5, 7)
STRIDE = (2, 2, 2)
PADDING = (1, 2, 3)
OUTPUT_PADDING = (1, 1, 1)
GROUPS = 4
DEPTH = 12
HEIGHT = 24
WIDTH = 48


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding, output_padding, groups):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel, stride=stride, padding=padding,
                                       output_padding=output_padding, groups=groups, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, DEPTH, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, PADDING, OUTPUT_PADDING, GROUPS]
