"""The fused correctness checks on a GPU (CTest label `gpu` through tests/gpu/run_eval_gpu_tests.sh):
the library compiles, loads and passes its self-test against the PyTorch path, and on larger
tensors (several pieces of the PyTorch path, an odd tail, bfloat16 and float16) every statistic of
the quick comparison and every fingerprint equals the PyTorch path's. Needs a CUDA GPU and nvcc;
skipped otherwise. Speed is not asserted here (docs/benchmarks.md)."""

import pytest
import torch

from gpu_helpers import have_gpu
from ucutlass_torch import correctness, fused_checks

pytestmark = pytest.mark.skipif(not (have_gpu() and fused_checks.nvcc_path()), reason="needs a CUDA GPU and nvcc")


@pytest.fixture(scope="module")
def lib():
    dev = torch.device("cuda")
    lib = fused_checks.load(dev)
    assert lib is not None, "the fused checks did not compile or load (see stderr)"
    assert correctness.fused_selftest(lib, dev) == ""
    assert correctness._fused_library(dev) is lib
    return lib


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_the_quick_comparison_equals_the_pytorch_path(lib, dtype):
    gen = torch.Generator(device="cuda").manual_seed(7)
    n = (1 << 25) + 12345  # more than one PyTorch piece (CHUNK x 6), an odd tail
    atol, rtol = correctness.tolerance("kb-v01", dtype)
    r = (torch.randn(n, device="cuda", generator=gen) * 5).to(dtype)
    o = (r.float() + (torch.rand(n, device="cuda", generator=gen) - 0.5) * atol).to(dtype)
    r[::1001] = 0
    for a, b in ((o, r), (o[:4096 * 999].view(4096, 999), r[:4096 * 999].view(4096, 999))):
        fused = correctness._compare_finite(a, b, atol, rtol, torch.float32, None, fused=True)
        plain = correctness._compare_finite(a, b, atol, rtol, torch.float32, None, fused=False)
        assert (fused is None) == (plain is None)
        if plain is not None:
            assert fused == plain
    bad = o.clone()
    bad[n - 1] = float("nan")  # the last element: a grid that missed the tail would pass it
    assert correctness._compare_finite(bad, r, atol, rtol, torch.float32, None, fused=True) is None
    full = correctness.compare(bad, r, atol, rtol)
    assert not full.passed and full.n_nan == 1 and full.worst_index == [n - 1]


def test_fingerprints_equal_the_pytorch_path(lib):
    gen = torch.Generator(device="cuda").manual_seed(8)
    ts = [torch.randn((1 << 24) + 3, device="cuda", generator=gen),
          torch.randn(4097, 33, device="cuda", generator=gen).to(torch.bfloat16),
          torch.randint(0, 255, (100003,), device="cuda", generator=gen, dtype=torch.uint8),
          torch.randn(5000, device="cuda", generator=gen).double()]
    for chunk in (None, 1 << 20, 1000):
        assert correctness.fingerprints(ts, chunk, fused=True) == correctness.fingerprints(ts, chunk, fused=False)
    # a swap of two elements changes the fingerprint
    t = ts[0].clone()
    t[[5, 6]] = t[[6, 5]]
    assert correctness.fingerprints([t])[0] != correctness.fingerprints([ts[0]])[0]


def test_a_check_gives_the_same_report_either_way(lib, monkeypatch):
    model = torch.nn.Linear(256, 128).cuda()
    w, b = model.weight.detach().double(), model.bias.detach().double()

    def inputs(seed):
        return [torch.randn(512, 256, device="cuda", generator=torch.Generator(device="cuda").manual_seed(seed))]

    def ref(xs):
        return model(*xs)

    def cand(xs):  # the same in float64, rounded: small differences everywhere
        return (xs[0].double() @ w.T + b).float()

    fused = correctness.check(ref, cand, inputs, profile="kb-v01", sync=torch.cuda.synchronize)
    monkeypatch.setattr(correctness, "_FUSED", {"cuda:0": None})
    plain = correctness.check(ref, cand, inputs, profile="kb-v01", sync=torch.cuda.synchronize)
    assert fused.passed and plain.passed
    assert [(t.max_abs, t.max_rel, t.worst_index) for t in fused.trials] == \
        [(t.max_abs, t.max_rel, t.worst_index) for t in plain.trials]
