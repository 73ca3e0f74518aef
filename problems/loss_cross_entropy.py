"""Cross-entropy of 65536 x 4096 logits against int64 class indices."""

import torch
import torch.nn as nn
import torch.nn.functional as F

ROWS = 65536
COLS = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.cross_entropy(predictions, targets)


def get_inputs():
    predictions = torch.randn(ROWS, COLS)
    targets = torch.randint(0, COLS, (ROWS,))
    return [predictions, targets]


def get_init_inputs():
    return []
