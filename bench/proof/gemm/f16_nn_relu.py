"""f16 a @ b with both operands row-major (B is N-contiguous) and a ReLU epilogue."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M, K, N = 4096, 4096, 4096


class Model(nn.Module):
    def forward(self, a, b):
        return torch.relu(a @ b)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)]


def get_init_inputs():
    return []
