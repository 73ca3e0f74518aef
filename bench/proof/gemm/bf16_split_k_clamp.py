"""bf16 a.T @ b with a 1024x1024 output and K = 32768 (split-K territory), clamp epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M, K, N = 1024, 32768, 1024


class Model(nn.Module):
    def forward(self, at, b):
        return torch.clamp((at.T @ b) * 0.25, -2.0, 2.0)


def get_inputs():
    return [torch.randn(K, M, dtype=torch.bfloat16) * 0.1, torch.randn(K, N, dtype=torch.bfloat16) * 0.1]


def get_init_inputs():
    return []
