"""KB L2 #2: ConvTranspose2d 64 -> 64 (3x3, stride 2, padding 1, output_padding 1) on 128 x 64 x 128 x 128, plus a randn bias, clamp, scale, clamp, divide."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 64
OUT_CHANNELS = 64
KERNEL = 3
STRIDE = 2
PADDING = 1
OUTPUT_PADDING = 1
HEIGHT = 128
WIDTH = 128
BIAS_SHAPE = (OUT_CHANNELS, 1, 1)
SCALE = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, stride, padding, output_padding, bias_shape, scale):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel, stride=stride, padding=padding,
                                         output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = scale

    def forward(self, x):
        x = self.conv_t(x) + self.bias
        x = torch.clamp(x, min=0.0, max=1.0) * self.scale
        x = torch.clamp(x, min=0.0, max=1.0)
        return x / self.scale


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, STRIDE, PADDING, OUTPUT_PADDING, BIAS_SHAPE, SCALE]
