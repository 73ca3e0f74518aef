"""KB L1 #31: F.elu with alpha passed through get_init_inputs on 4096 x 393216 fp32."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
DIM = 393216


class Model(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.rand(BATCH, DIM)]


def get_init_inputs():
    return [1.0]
