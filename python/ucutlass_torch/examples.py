"""Two ordinary PyTorch modules the docs, the GPU tests and bench/python use as a user's model:
a GPT-style transformer block (pre-LayerNorm, causal scaled_dot_product_attention, GELU MLP) and
a Llama-style MLP (down(silu(gate(x)) * up(x))). Written as a user writes them, not as problem
files; imports torch when imported (the package's own import does not)."""

from __future__ import annotations

import torch.nn as nn
import torch.nn.functional as F


class GptBlock(nn.Module):
    """GPT-2's block: d_model ``d``, ``heads`` heads, an MLP of 4 d, pre-LayerNorm, causal attention."""

    def __init__(self, d: int = 768, heads: int = 12):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class LlamaMLP(nn.Module):
    """Llama's feed-forward: model dim ``d``, hidden ``h`` (Llama-7B: 4096, 11008), no biases."""

    def __init__(self, d: int = 4096, h: int = 11008):
        super().__init__()
        self.gate, self.up = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False)
        self.down = nn.Linear(h, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))
