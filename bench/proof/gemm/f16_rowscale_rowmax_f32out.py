"""f16 operands, fp32 outputs: per-row scale, leaky ReLU, and a per-row max as a second output."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M, K, N = 4096, 4096, 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(K, N, bias=False, dtype=torch.float16)

    def forward(self, x, s):
        h = (x.float() @ self.proj.weight.float().T) * s[:, None]
        return F.leaky_relu(h, 0.1), h.amax(dim=1)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16) * 0.1, torch.rand(M) + 0.5]


def get_init_inputs():
    return []
