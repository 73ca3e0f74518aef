"""AvgPool3d(3, stride 2, padding 1, ceil_mode, count_include_pad=False), and with divisor_override 20 (GPU harness test problem): two window avg stages, the first dividing by the taps inside x."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.AvgPool3d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        return self.pool(x), F.avg_pool3d(x, 3, stride=2, padding=1, ceil_mode=True, divisor_override=20)


def get_inputs():
    return [torch.randn(4, 16, 17, 24, 31)]


def get_init_inputs():
    return []
