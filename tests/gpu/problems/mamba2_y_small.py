"""Mamba2 chunked SSD scan returning y at test size: segsum masks folded, multi-operand einsums as pairs, the rest in torch stages."""

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 2
SEQ_LENGTH = 32
N_HEADS = 2
D_HEAD = 8
D_STATE = 4
BLOCK_LEN = 16


class Model(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__()
        assert seq_length % block_len == 0, "the sequence length must be a multiple of the block length"
        self.block_len = block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def segsum(self, x):
        # out[..., i, j] = sum(x[..., j+1 .. i]) below the diagonal, -inf above it.
        T = x.size(-1)
        x_cumsum = torch.cumsum(x, dim=-1)
        x_segsum = x_cumsum[..., :, None] - x_cumsum[..., None, :]
        mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
        return x_segsum.masked_fill(~mask, -torch.inf)

    def chunk(self, x):
        # einops' "b (c l) ... -> b c l ..." (KernelBench uses einops): blocks of block_len.
        return x.reshape(x.shape[0], x.shape[1] // self.block_len, self.block_len, *x.shape[2:])

    def forward(self, X, initial_states=None):
        X_blocks, A_blocks, B_blocks, C_blocks = [self.chunk(t) for t in (X, self.A, self.B, self.C)]
        b, c, l = X_blocks.shape[:3]
        A_blocks = A_blocks.permute(0, 3, 1, 2)  # b c l h -> b h c l
        A_cumsum = torch.cumsum(A_blocks, dim=-1)

        # 1. Outputs of the diagonal blocks.
        L = torch.exp(self.segsum(A_blocks))
        Y_diag = torch.einsum("bclhn,bcshn,bhcls,bcshp->bclhp", C_blocks, B_blocks, L, X_blocks)

        # 2. States at the end of each chunk.
        decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
        states = torch.einsum("bclhn,bhcl,bclhp->bchpn", B_blocks, decay_states, X_blocks)

        # 3. Recurrence between chunks.
        if initial_states is None:
            initial_states = torch.zeros_like(states[:, :1])
        states = torch.cat([initial_states, states], dim=1)
        decay_chunk = torch.exp(self.segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
        new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
        states = new_states[:, :-1]

        # 4. State-to-output conversion.
        state_decay_out = torch.exp(A_cumsum)
        Y_off = torch.einsum("bclhn,bchpn,bhcl->bclhp", C_blocks, states, state_decay_out)
        Y = Y_diag + Y_off
        return Y.reshape(b, c * l, *Y.shape[3:])


def get_inputs():
    return [torch.rand(BATCH, SEQ_LENGTH, N_HEADS, D_HEAD)]


def get_init_inputs():
    return [BATCH, SEQ_LENGTH, N_HEADS, D_HEAD, D_STATE, BLOCK_LEN]
