"""A problem file importing a package this Python lacks (einops-style helpers)."""
import torch
import ucutlass_test_package_that_is_not_installed  # noqa: F401
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
