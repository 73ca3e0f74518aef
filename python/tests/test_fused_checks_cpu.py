"""The fused correctness checks (fused_checks.cu, fused_checks.py) without a GPU: nvcc compiles the
file and the library loads with its three entry points; correctness.fused_selftest accepts a
library that computes what the kernels are meant to (emulated here in PyTorch on the CPU, step by
step in float32 as the kernel rounds) and rejects ones that get an index, a rounding or a
fingerprint wrong, so a wrong kernel on a GPU keeps the PyTorch path; without a GPU nothing is
loaded and the PyTorch path runs."""

import ctypes
import math
import os

import pytest
import torch

from ucutlass_torch import correctness, fused_checks


class Emulated:
    """What fused_checks.Library computes, in PyTorch on the CPU: one pass, the kernel's roundings.
    ``flaw`` breaks one thing, as a wrong kernel would."""

    def __init__(self, flaw: str = ""):
        self.flaw = flaw

    def compare(self, out, ref, atol, rtol):
        o, r = out.reshape(-1).float(), ref.reshape(-1).float()
        d = (o - r).abs()
        ra = r.abs()
        if self.flaw == "fma":  # one rounding for rtol * |r| + atol, as a contracted kernel would
            bound = (ra.double() * rtol + atol).float()
        else:
            bound = (ra * torch.tensor(rtol, dtype=torch.float32)) + torch.tensor(atol, dtype=torch.float32)
        score = d - bound
        bad = (~(torch.isfinite(d) & torch.isfinite(ra) & (score <= 0))).sum()
        rel = torch.where(ra == 0, torch.zeros_like(d), d / ra)
        score = torch.where(torch.isnan(score), torch.full_like(score, -math.inf), score)  # NaN never wins
        best = score.max()
        ties = (score == best).nonzero().reshape(-1)
        first = ties[-1] if self.flaw == "last" else ties[0]
        if self.flaw == "skip-tail" and d.numel() > 1:  # a grid that misses the last element
            d, ra, rel = d[:-1], ra[:-1], rel[:-1]
        return torch.stack([bad.double(), d.max().double(), ra.max().double(), rel.max().double(), best.double(),
                            first.double()])

    def fingerprint(self, words, step):
        n = words.numel()
        bits = {torch.int32: 31, torch.int16: 15, torch.uint8: 8}[words.dtype]
        pos = torch.arange(n, dtype=torch.int64)
        piece, at = pos // step, pos % step
        mask = ((at * 2654435761 + 40503) % (1 << bits)).to(words.dtype)
        x = torch.bitwise_xor(words, mask)
        plain = words.to(torch.int64).sum()
        weight = piece + (2 if self.flaw == "place" else 1)
        mixed = (x.to(torch.int64) * weight).sum()
        return torch.stack([plain, mixed])


def test_the_selftest_accepts_a_faithful_library():
    assert correctness.fused_selftest(Emulated(), "cpu") == ""


@pytest.mark.parametrize("flaw,says", [("last", "worst index"), ("place", "fingerprint"), ("fma", ""),
                                       ("skip-tail", "")])
def test_the_selftest_rejects_a_wrong_library(flaw, says):
    why = correctness.fused_selftest(Emulated(flaw), "cpu")
    if flaw in ("fma", "skip-tail"):
        # a rounding or coverage flaw shows somewhere in the battery (which statistic first
        # depends on the data)
        assert why, f"the self-test missed the {flaw} flaw"
    else:
        assert says in why, why


def test_without_a_gpu_nothing_loads_and_the_pytorch_path_runs(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert fused_checks.load() is None
    o = torch.randn(1000)
    c = correctness.compare(o, o.clone(), 1e-4, 1e-4)
    assert c.passed and c.max_abs == 0


def test_the_environment_switch_turns_it_off(monkeypatch):
    monkeypatch.setenv(fused_checks.ENV, "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert fused_checks.load() is None


@pytest.mark.skipif(not fused_checks.nvcc_path(), reason="needs nvcc")
def test_nvcc_compiles_it_once_into_a_library_with_its_entry_points(tmp_path):
    path = fused_checks.compile_library("90a", out_dir=str(tmp_path))
    assert os.path.exists(path)
    again = fused_checks.compile_library("90a", out_dir=str(tmp_path))
    assert again == path and len(os.listdir(tmp_path)) == 1  # cached, no temporary left behind
    lib = fused_checks.Library(path)
    assert lib.threads == 256
    for name in ("ucut_fused_compare", "ucut_fused_fingerprint"):
        assert isinstance(getattr(lib.lib, name), ctypes._CFuncPtr)


def test_a_compile_error_is_a_message_not_a_crash(tmp_path, monkeypatch):
    bad = tmp_path / "broken.cu"
    bad.write_text("this is not CUDA\n")
    monkeypatch.setattr(fused_checks, "SOURCE", str(bad))
    if not fused_checks.nvcc_path():
        with pytest.raises(RuntimeError, match="nvcc not found"):
            fused_checks.compile_library("90a", out_dir=str(tmp_path / "out"))
        return
    with pytest.raises(RuntimeError, match="nvcc failed on .*broken.cu"):
        fused_checks.compile_library("90a", out_dir=str(tmp_path / "out"))
    assert not os.listdir(tmp_path / "out")  # the temporary .so is removed


def test_a_library_failing_its_selftest_is_not_used(monkeypatch, capsys):
    monkeypatch.setattr(fused_checks, "load", lambda device=None: Emulated("last"))
    monkeypatch.setattr(correctness, "_FUSED", {})
    assert correctness._fused_library(torch.device("cpu")) is None
    assert "disagree with the PyTorch path" in capsys.readouterr().err
    monkeypatch.setattr(fused_checks, "load", lambda device=None: Emulated())
    monkeypatch.setattr(correctness, "_FUSED", {})
    assert isinstance(correctness._fused_library(torch.device("cpu")), Emulated)


def test_emulated_statistics_match_the_quick_comparison_on_a_failing_element():
    # the quick path's decision from the library's numbers: out of tolerance leaves it
    r = torch.randn(5000)
    o = r.clone()
    o[1234] += 1.0
    stats = Emulated().compare(o, r, 1e-4, 1e-4).tolist()
    assert stats[0] == 1 and int(stats[5]) == 1234 and stats[4] > 0
    assert correctness._compare_finite(o, r, 1e-4, 1e-4, torch.float32, None, fused=False) is None
    assert math.isclose(stats[1], 1.0, rel_tol=1e-3)
