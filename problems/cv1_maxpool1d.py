"""KB L1 #41: MaxPool1d, kernel 8, stride 1, padding 4, dilation 3, on 64 x 192 x 65536."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 64
FEATURES = 192
LENGTH = 65536
KERNEL = 8
STRIDE = 1
PADDING = 4
DILATION = 3


class Model(nn.Module):
    def __init__(self, kernel, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool1d(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(BATCH, FEATURES, LENGTH)]


def get_init_inputs():
    return [KERNEL, STRIDE, PADDING, DILATION]
