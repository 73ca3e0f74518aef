"""fp32 4096^3 a @ b.T on U[0,1) data, where plain TF32 passes atol=rtol=1e-4 (outputs ~1000)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4096


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b.T


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
