"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1}."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 32768
COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.randn(ROWS, COLS)
    targets = torch.randint(0, 2, (ROWS, COLS)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
