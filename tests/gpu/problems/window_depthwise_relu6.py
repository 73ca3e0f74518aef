"""Depthwise Conv2d 32 -> 64 (channel multiplier 2), 3x3, stride 2, padding 1, bias, ReLU6 (GPU harness test problem): one window sum stage, the bias in it, the ReLU6 in its epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(32, 64, 3, stride=2, padding=1, groups=32)

    def forward(self, x):
        return F.relu6(self.conv(x))


def get_inputs():
    return [torch.randn(8, 32, 56, 56)]


def get_init_inputs():
    return []
