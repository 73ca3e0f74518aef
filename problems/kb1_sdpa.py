"""KB L1 #97: F.scaled_dot_product_attention, fp32, 32 x 32 heads, sequence 512, head dim 1024."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
HEADS = 32
SEQ = 512
EMBED = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q, K, V):
        return F.scaled_dot_product_attention(Q, K, V)


def get_inputs():
    Q = torch.rand(BATCH, HEADS, SEQ, EMBED)
    K = torch.rand(BATCH, HEADS, SEQ, EMBED)
    V = torch.rand(BATCH, HEADS, SEQ, EMBED)
    return [Q, K, V]


def get_init_inputs():
    return []
