"""Bad problem for tests/extract.cmake: control flow on a tensor value (line 11)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if x.mean() > 0:
            return x * 2
        return x


def get_inputs():
    return [torch.randn(16, 16)]


def get_init_inputs():
    return []
