"""KB L2 #68: Linear 128 x 16384 -> 16384, torch.min with a 0-d nn.Parameter, minus it."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_FEATURES = 16384
OUT_FEATURES = 16384


class Model(nn.Module):
    def __init__(self, in_features, out_features, constant):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))

    def forward(self, x):
        x = self.linear(x)
        x = torch.min(x, self.constant)
        return x - self.constant


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 2.0]
