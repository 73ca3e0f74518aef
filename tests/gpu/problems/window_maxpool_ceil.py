"""MaxPool2d(3, stride 2, padding 1, dilation 2, ceil_mode) then ReLU (GPU harness test problem): one window max stage, the ReLU in its epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.relu(F.max_pool2d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True))


def get_inputs():
    return [torch.randn(8, 32, 67, 67)]


def get_init_inputs():
    return []
