"""KB L1 #21: sigmoid on 4096 x 393216 fp32: exp per element, still bandwidth bound."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(x)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
