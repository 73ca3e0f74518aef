"""ReLU over 8192 x 4096 fp32 (GPU harness test problem): the hostile kernels of tests/gpu/kernels/relu_hostile.cu."""
import torch
import torch.nn as nn

ROWS, COLS = 8192, 4096


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
