"""f16 Linear + bias with elu, selu, softsign, hardswish, hardsigmoid and hardtanh summed."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(N, N, dtype=torch.float16)

    def forward(self, x):
        h = self.fc(x)
        return (F.elu(h) + F.selu(h) + F.softsign(h) + F.hardswish(h) + F.hardsigmoid(h)
                + F.hardtanh(h, -0.5, 0.5))


def get_inputs():
    return [torch.randn(N, N, dtype=torch.float16)]


def get_init_inputs():
    return []
