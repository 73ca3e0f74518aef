"""KB L2 #59: Linear 128 x 32768 -> 32768 (a 4 GiB weight, 128 rows), swish, times 2.0."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 128
IN_FEATURES = 32768
OUT_FEATURES = 32768


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        x = x * torch.sigmoid(x)
        return x * self.scaling_factor


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES)]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES, 2.0]
