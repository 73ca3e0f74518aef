"""torch.mean over dim 1 of 1024 x 4096 (GPU export test): the reference returns (1024,) whatever the library declares."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.mean(x, dim=1)


def get_inputs():
    return [torch.randn(1024, 4096)]


def get_init_inputs():
    return []
