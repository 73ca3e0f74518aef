"""Row softmax over 65536 columns (GPU harness test problem): every output is below 1e-4, so the
problem is degenerate under the default tolerance and must be flagged, never counted."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(64, 65536)]


def get_init_inputs():
    return []
