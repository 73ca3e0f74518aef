"""LogSoftmax over rows of 8192 x 32768 fp32: long rows."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 8192
COLS = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.log_softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
