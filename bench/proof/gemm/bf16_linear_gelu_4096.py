"""bf16 Linear 4096^3 + bias + tanh-GELU: the fused-epilogue headline (matmul then GELU in eager)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(N, N, dtype=torch.bfloat16)

    def forward(self, x):
        return F.gelu(self.fc(x), approximate="tanh")


def get_inputs():
    return [torch.randn(N, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
