"""KB L1 #100: mean(clamp(1 - p * t, min=0)), Pareto p 32768 x 32768, t a broadcast +-1 vector."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Pareto

BATCH = 32768
DIM = 32768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = Pareto(0.01, 1.5).sample((BATCH, DIM))
    targets = torch.randint(0, 2, (BATCH,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
