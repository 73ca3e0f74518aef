"""A lone 3x3 ConvTranspose2d of stride 2 and dilation 2 (small): its odd output phases get no tap, which
the lowering refuses (strided transposed convs run by output phases), so its result is the PyTorch fallback."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.ConvTranspose2d(cin, cout, 3, stride=2, padding=2, dilation=2, output_padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 4, 16, 16)]


def get_init_inputs():
    return [4, 8]
