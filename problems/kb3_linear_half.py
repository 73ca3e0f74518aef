"""fp16 model: nn.Linear(8192, 8192).half() in __init__, fp16 input 4096 x 8192 (not in KB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 4096
IN_FEATURES = 8192
OUT_FEATURES = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features).half()

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.rand(BATCH, IN_FEATURES).half()]


def get_init_inputs():
    return [IN_FEATURES, OUT_FEATURES]
