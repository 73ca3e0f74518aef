"""KB L1 #20: LeakyReLU(0.01) on 4096 x 393216 fp32, the slope held as a module attribute."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 393216


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
