"""Adaptive average pooling to 7 x 7 and a global average pool squeezed to [N, C] (GPU harness test problem): two window adaptive_avg stages, the global one reduced by a warp an output."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        a = F.adaptive_avg_pool2d(x, (7, 7))
        g = F.adaptive_avg_pool2d(x, 1).squeeze(-1).squeeze(-1)
        return a, g


def get_inputs():
    return [torch.randn(4, 64, 60, 50)]


def get_init_inputs():
    return []
