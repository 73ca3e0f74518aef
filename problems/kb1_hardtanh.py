"""KB L1 #32: F.hardtanh(min_val=-1., max_val=1.) on 4096 x 393216 fp32."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return []
