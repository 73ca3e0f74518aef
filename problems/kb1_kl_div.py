"""KB L1 #98: F.kl_div(torch.log(p), q, reduction='batchmean') on 16384 x 16384 softmax-normalised fp32 rows."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16384
DIM = 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    scale = torch.rand(())
    predictions = (torch.rand(BATCH, DIM) * scale).softmax(dim=-1)
    targets = torch.rand(BATCH, DIM).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
