"""Window stages of every rank (GPU harness test problem): a 1-D avg pool with ceil_mode, a dilated 3-D max pool with ceil_mode, a dilated depthwise Conv1d with channel multiplier 3 and a sigmoid epilogue, a depthwise Conv3d with an asymmetric kernel, stride and padding, an adaptive 3-D average pool."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 12, 5, stride=2, padding=3, dilation=2, groups=4)
        self.c3 = nn.Conv3d(3, 3, (2, 3, 3), stride=(1, 2, 1), padding=(1, 0, 2), groups=3, bias=False)

    def forward(self, x, z):
        a = F.avg_pool1d(x, 4, stride=3, padding=2, ceil_mode=True)
        b = F.max_pool3d(z, 3, stride=2, padding=1, dilation=2, ceil_mode=True)
        c = torch.sigmoid(self.c1(x)) * 2.0
        d = self.c3(z)
        e = F.adaptive_avg_pool3d(z, (2, 3, 4))
        return a, b, c, d, e


def get_inputs():
    return [torch.randn(16, 4, 377), torch.randn(4, 3, 19, 20, 21)]


def get_init_inputs():
    return []
