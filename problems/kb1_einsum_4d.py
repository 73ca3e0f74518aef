"""KB L1 #11: torch.einsum('bijl,lk->bijk'), 8 x 256 x 512 x 256 times 256 x 768."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8
I = 256
J = 512
L = 256
K = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    return [torch.rand(BATCH, I, J, L), torch.rand(L, K)]


def get_init_inputs():
    return []
