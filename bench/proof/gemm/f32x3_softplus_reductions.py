"""fp32 Linear + softplus with a per-row sum and a per-column max as extra outputs (fp32-faithful)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M, K, N = 2048, 4096, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(K, N)

    def forward(self, x):
        y = F.softplus(self.fc(x))
        return y, y.sum(dim=1), y.amax(dim=0)


def get_inputs():
    return [torch.rand(M, K)]


def get_init_inputs():
    return []
