"""torch.einsum('bijl,lk->bijk') at test size (GPU export test): the lowering declares A [2, 16, 32, 64] as [32, 32, 64]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.rand(2, 16, 32, 64), torch.rand(64, 48)]


def get_init_inputs():
    return []
