"""A plain x @ W with W [K, N] (N contiguous): TF32 only through mma.sync (tf32m); passes kb-v01."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(1024, 768), torch.rand(768, 512)]


def get_init_inputs():
    return []
