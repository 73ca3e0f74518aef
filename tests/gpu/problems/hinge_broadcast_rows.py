"""KernelBench's hinge loss at test size: mean(clamp(1 - p * t, min=0)) with t one +-1 value per column of p [2048, 4096]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    return [torch.randn(2048, 4096), torch.randint(0, 2, (4096,)).float() * 2 - 1]


def get_init_inputs():
    return []
