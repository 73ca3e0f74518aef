"""KB L3 #50: causal attention with relu(scores) for softmax, B 16, T 1024, C 768, 12 heads."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 16
MAX_SEQLEN = 1024
N_EMBD = 768
N_HEAD = 12


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        mask = torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen)
        self.register_buffer("bias", mask)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.relu(att)
        y = att @ v
        return y.transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.rand(BATCH, MAX_SEQLEN, N_EMBD)]


def get_init_inputs():
    return [N_EMBD, N_HEAD, MAX_SEQLEN]
