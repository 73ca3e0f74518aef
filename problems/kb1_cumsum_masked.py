"""KB L1 #93: cumsum of x * mask with a boolean mask of the same 32768 x 32768 shape: a bool input."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32768
DIM = 32768


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.rand(BATCH, DIM)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [1]
