"""Two bf16 Linear heads of different shapes (grouped GEMM in one launch) with ReLU on both."""

import torch
import torch.nn as nn
import torch.nn.functional as F



class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head0 = nn.Linear(2048, 4096, bias=False, dtype=torch.bfloat16)
        self.head1 = nn.Linear(4096, 2048, bias=False, dtype=torch.bfloat16)

    def forward(self, a0, a1):
        return torch.relu(self.head0(a0)), torch.relu(self.head1(a1))


def get_inputs():
    return [torch.randn(8192, 2048, dtype=torch.bfloat16), torch.randn(4096, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
