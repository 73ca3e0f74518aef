"""The Python API and the torch.compile backend on a GPU (issue 39; CTest label `gpu` through
tests/gpu/run_eval_gpu_tests.sh): ucutlass_torch.optimize on a Llama-style MLP returns a module
equal to the reference under the kb-v01 contract's tolerance, save/load runs it again without a
search, and backend="ucutlass" compiles a small GPT block (attention, MLP, LayerNorms) to the same
result. Needs a CUDA GPU, the ucutlass binary ($UCUT_GPU_BIN, else build-gpu/ or build/), nvcc and
the CUTLASS headers; skipped otherwise."""

import os
import sys

import pytest

from gpu_helpers import have_gpu, ucutlass_binary

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

BIN = ucutlass_binary()
pytestmark = pytest.mark.skipif(not (BIN and have_gpu()), reason="needs a CUDA GPU and the ucutlass binary")
TOL = 1e-2  # kb-v01: atol = rtol = 1e-2 (docs/eval-contract.md)


def mlp():
    import torch.nn as nn
    import torch.nn.functional as F

    class MLP(nn.Module):  # Llama-style: down(silu(gate(x)) * up(x))
        def __init__(self, d=512, h=1408):
            super().__init__()
            self.gate, self.up, self.down = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), nn.Linear(h, d, bias=False)

        def forward(self, x):
            return self.down(F.silu(self.gate(x)) * self.up(x))
    return MLP()


def gpt_block():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d=256, heads=4):
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
    return Block()


def test_optimize_mlp_matches_the_reference_and_reloads(tmp_path):
    import torch
    import ucutlass_torch
    torch.manual_seed(0)
    m = mlp().cuda().eval()
    x = torch.randn(32, 512, device="cuda")
    opt = ucutlass_torch.optimize(m, [x], minutes=3, budget=4, profile="kb-v01", binary=BIN,
                                  cache_dir=str(tmp_path / "cache"), db=str(tmp_path / "memory.db"))
    print(opt)
    with torch.no_grad():
        want, got = m(x), opt(x)
    torch.cuda.synchronize()
    assert got.shape == want.shape and got.dtype == want.dtype
    assert torch.allclose(got, want, atol=TOL, rtol=TOL), float((got - want).abs().max())
    # At least one part must run a kernel: a run where every search failed (run CK: the problem
    # files did not load on the GPU) still matches the reference through the fallback.
    assert any(p.status == "kernel" for p in opt.report.parts), str(opt.report)
    opt.save(str(tmp_path / "saved"))
    torch._dynamo.reset()
    again = ucutlass_torch.load(str(tmp_path / "saved"), m, cache_dir=str(tmp_path / "fresh"))
    with torch.no_grad():
        got2 = again(x)
    assert torch.allclose(got2, want, atol=TOL, rtol=TOL)
    assert [p.status for p in again.report.parts] == [p.status for p in opt.report.parts]
    assert not any(p.searched for p in again.report.parts)


def test_backend_on_a_gpt_block(tmp_path):
    import torch
    import ucutlass_torch
    ucutlass_torch.register_backend()  # a pip install registers it by entry point; the tests run from source
    torch.manual_seed(0)
    m = gpt_block().cuda().eval()
    x = torch.randn(2, 128, 256, device="cuda")
    torch._dynamo.reset()
    options = {"budget": 3, "minutes": 3, "profile": "kb-v01", "binary": BIN, "cache_dir": str(tmp_path / "cache"),
               "db": str(tmp_path / "memory.db")}
    compiled = torch.compile(m, backend="ucutlass", options=options)
    with torch.no_grad():
        want, got = m(x), compiled(x)
    torch.cuda.synchronize()
    assert got.shape == want.shape
    assert torch.allclose(got, want, atol=TOL, rtol=TOL), float((got - want).abs().max())
    # The same graphs through a backend object whose report can be read: the searches above are in
    # the cache now, so this costs no search, and at least one subgraph must be a kernel.
    from ucutlass_torch.backend import backend_from_options
    be = backend_from_options(dict(options, budget=0))
    torch._dynamo.reset()
    with torch.no_grad():
        got2 = torch.compile(m, backend=be)(x)
    torch.cuda.synchronize()
    assert torch.allclose(got2, want, atol=TOL, rtol=TOL)
    assert any(p.status == "kernel" for p in be.report.parts), str(be.report)
    assert not any(p.searched for p in be.report.parts)
