"""Softmax over a 128256-entry vocabulary for 2048 tokens (fp32 logits of std 3, 1 GB): rows too long for one block."""

import torch
import torch.nn as nn

TOKENS = 2048
VOCAB = 128256


class Model(nn.Module):
    def forward(self, logits):
        return torch.softmax(logits, dim=-1)


def get_inputs():
    # logits of std 3, as a language model's are: ~1% of the probabilities exceed atol = 1e-4
    return [3 * torch.randn(TOKENS, VOCAB)]


def get_init_inputs():
    return []
