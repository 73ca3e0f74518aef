"""An f16 Linear built with .half() (and moved with .cuda()) in __init__, fed f32 inputs converted in forward, returning .float()."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n).half().cuda()

    def forward(self, x):
        return torch.relu(self.fc(x.half())).float()


def get_inputs():
    return [torch.randn(256, 512, device="cuda")]


def get_init_inputs():
    return [512, 1024]
