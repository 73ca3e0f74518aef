"""f16 a.T @ b.T (both operands column-major) scaled by 0.5 plus a residual tensor."""

import torch
import torch.nn as nn
import torch.nn.functional as F

M, K, N = 4096, 8192, 4096


class Model(nn.Module):
    def forward(self, at, bt, r):
        return 0.5 * (at.T @ bt.T) + r


def get_inputs():
    return [torch.randn(K, M, dtype=torch.float16), torch.randn(N, K, dtype=torch.float16),
            torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []
