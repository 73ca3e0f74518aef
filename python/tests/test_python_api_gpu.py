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
    from ucutlass_torch.examples import LlamaMLP
    return LlamaMLP(512, 1408)


def gpt_block():
    from ucutlass_torch.examples import GptBlock
    return GptBlock(256, 4)


def test_optimize_mlp_matches_the_reference_and_reloads(tmp_path):
    import torch
    import ucutlass_torch
    torch.manual_seed(0)
    m = mlp().cuda().eval()
    x = torch.randn(32, 512, device="cuda")
    # fallback="inductor": the parts that are kernels stay kernels ("auto" may run the graph
    # without them where that is faster end to end; test_backend_on_a_gpt_block checks it)
    opt = ucutlass_torch.optimize(m, [x], minutes=3, budget=4, profile="kb-v01", binary=BIN,
                                  cache_dir=str(tmp_path / "cache"), db=str(tmp_path / "memory.db"),
                                  fallback="inductor")
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
    be = backend_from_options(dict(options, budget=0, fallback="inductor"))
    torch._dynamo.reset()
    with torch.no_grad():
        got2 = torch.compile(m, backend=be)(x)
    torch.cuda.synchronize()
    assert torch.allclose(got2, want, atol=TOL, rtol=TOL)
    assert any(p.status == "kernel" for p in be.report.parts), str(be.report)
    assert not any(p.searched for p in be.report.parts)
    # The default, "auto": at each graph's first call it times Inductor around the kernels, the
    # graph eagerly and the graph without its kernels on the GPU, runs the fastest, and says so.
    auto = backend_from_options(dict(options, budget=0))
    torch._dynamo.reset()
    with torch.no_grad():
        compiled3 = torch.compile(m, backend=auto)
        got3, got4 = compiled3(x), compiled3(x)
    torch.cuda.synchronize()
    assert torch.allclose(got3, want, atol=TOL, rtol=TOL) and torch.allclose(got4, want, atol=TOL, rtol=TOL)
    print(auto.report)
    assert len(auto.report.paths) == auto.report.graphs, auto.report.paths
    assert all("Inductor" in p and " ms" in p and "eager" in p for p in auto.report.paths), auto.report.paths
