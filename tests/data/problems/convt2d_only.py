"""A lone 3x3 ConvTranspose2d of stride 2 with 32 groups (small): more groups than the lowering runs as
conv stages of their own (16), so its result is the PyTorch fallback."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=1, output_padding=1, groups=32)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 32, 16, 16)]


def get_init_inputs():
    return [32, 64]
