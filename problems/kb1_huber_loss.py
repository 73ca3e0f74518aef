"""KB L1 #96: F.smooth_l1_loss on 32768 x 32768 Pareto fp32, predictions times a random scale."""

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
        return F.smooth_l1_loss(predictions, targets)


def get_inputs():
    scale = torch.rand(())
    predictions = Pareto(0.01, 1.5).sample((BATCH, DIM))
    targets = Pareto(0.01, 1.5).sample((BATCH, DIM))
    return [predictions * scale, targets]


def get_init_inputs():
    return []
