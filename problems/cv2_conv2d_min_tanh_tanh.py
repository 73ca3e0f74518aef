"""KB L2 #25: Conv2d 16 -> 64 (3x3) on 128 x 16 x 256 x 256, min over channels (keepdim), then tanh twice."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 16
OUT_CHANNELS = 64
KERNEL = 3
HEIGHT = 256
WIDTH = 256


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)

    def forward(self, x):
        x = torch.min(self.conv(x), dim=1, keepdim=True)[0]
        return torch.tanh(torch.tanh(x))


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL]
