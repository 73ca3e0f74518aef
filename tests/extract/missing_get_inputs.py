"""Bad problem for tests/extract.cmake: no get_inputs()."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_init_inputs():
    return []
