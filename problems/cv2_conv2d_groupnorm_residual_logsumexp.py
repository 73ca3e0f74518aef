"""KB L2 #92: Conv2d 8 -> 64 (3x3) on 128 x 8 x 128 x 128, GroupNorm(16), tanh, hardswish, plus the conv output, then logsumexp over channels (keepdim)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_CHANNELS = 8
OUT_CHANNELS = 64
KERNEL = 3
HEIGHT = 128
WIDTH = 128
GROUPS = 16


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel)
        self.norm = nn.GroupNorm(groups, out_channels, eps=1e-5)

    def forward(self, x):
        y = self.conv(x)
        z = F.hardswish(torch.tanh(self.norm(y)))
        return torch.logsumexp(y + z, dim=1, keepdim=True)


def get_inputs():
    return [torch.rand(BATCH, IN_CHANNELS, HEIGHT, WIDTH)]


def get_init_inputs():
    return [IN_CHANNELS, OUT_CHANNELS, KERNEL, GROUPS]
