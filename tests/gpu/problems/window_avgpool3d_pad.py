"""AvgPool3d(3, stride 2, padding 1, ceil_mode, count_include_pad=False) (GPU harness test problem): one window avg stage whose divisors count only the taps inside x."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(4, 16, 17, 24, 31)]


def get_init_inputs():
    return []
