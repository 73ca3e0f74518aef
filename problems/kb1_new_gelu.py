"""KB L1 #88: minGPT's NewGELU (tanh form, torch.pow(x, 3.0)) written out on 8192 x 8192 fp32."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8192
DIM = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
