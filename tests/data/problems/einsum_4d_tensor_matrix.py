"""KernelBench's 4-D tensor-matrix product, torch.einsum('bijl,lk->bijk'), at a small size."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.randn(2, 16, 32, 64), torch.randn(64, 96)]


def get_init_inputs():
    return []
