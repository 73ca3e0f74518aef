"""f32x3w on A [300, 2048] @ B [2048, 1000] (B N-major) with an epilogue that reads a per-row
scale, a per-column bias and a residual, and reduces the result per row and per column: the unit
computes the transposed product, so the output's per-row vectors and reductions are its
per-column ones (docs/language.md, "A in registers, any layout")."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B, s, b, R):
        y = torch.relu(torch.matmul(A, B) * s.unsqueeze(1) + b + R)
        return y, y.sum(dim=1), y.amax(dim=0)


def get_inputs():
    return [torch.rand(300, 2048), torch.rand(2048, 1000), torch.rand(300), torch.randn(1000), torch.randn(300, 1000)]


def get_init_inputs():
    return []
