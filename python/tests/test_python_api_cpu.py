"""ucutlass_torch.optimize / save / load on the CPU (api.py): the backend's machinery with a
stubbed binary and stand-in libraries (test_backend_partition_cpu's), a printable report, and a
saved module that loads in a fresh cache without any search."""

import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ucutlass_torch  # noqa: E402
from ucutlass_torch import tool  # noqa: E402
from test_backend_partition_cpu import Block, FakeBinary, stand_in_loader  # noqa: E402


def test_importing_the_package_does_not_import_the_api():
    assert "optimize" not in vars(ucutlass_torch)
    assert callable(ucutlass_torch.optimize) and callable(ucutlass_torch.load)


def test_optimize_save_load(tmp_path):
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    fake = FakeBinary()
    torch._dynamo.reset()
    opt = ucutlass_torch.optimize(m, [x], minutes=2, profile="kb-v01", policy="tf32", budget=5,
                                  cache_dir=str(tmp_path / "cache"), fallback="eager", runner=fake,
                                  load_library=stand_in_loader)
    assert len(fake.calls) == 2
    argv = fake.calls[0]
    # the model's 2 minutes shared out: the first of its two subgraphs gets half
    assert 0.9 < float(argv[argv.index("--time-budget") + 1]) <= 1.0 and argv[argv.index("--profile") + 1] == "kb-v01"
    with torch.no_grad():
        assert torch.allclose(opt(x), m(x), atol=1e-5)
    text = str(opt)
    assert "2 running μCUTLASS kernels" in text and "left to the fallback" in text
    opt.measure([x], reps=2)
    assert "end to end" in str(opt)

    opt.save(str(tmp_path / "saved"))
    saved = sorted(os.listdir(tmp_path / "saved"))
    assert "ucutlass-module.json" in saved and len(saved) == 3
    torch._dynamo.reset()
    again = ucutlass_torch.load(str(tmp_path / "saved"), m, cache_dir=str(tmp_path / "fresh"),
                                load_library=stand_in_loader)
    with torch.no_grad():
        assert torch.allclose(again(x), m(x), atol=1e-5)
    assert [p.status for p in again.report.parts] == ["kernel", "kernel"]
    assert not any(p.searched for p in again.report.parts)
    assert not (tmp_path / "fresh").exists() or not any((tmp_path / "fresh").iterdir())


def test_binary_lookup_and_version_check(tmp_path, monkeypatch):
    exe = tmp_path / "ucutlass"
    exe.write_text("#!/bin/sh\necho 'ucutlass 0.1.0'\n")
    exe.chmod(0o755)
    monkeypatch.setenv("UCUTLASS_BIN", str(exe))
    assert tool.find_binary() == str(exe)
    assert tool.check_binary() == str(exe)
    old = tmp_path / "old"
    old.write_text("#!/bin/sh\necho 'ucutlass 0.0.9'\n")
    old.chmod(0o755)
    import pytest
    with pytest.raises(tool.ToolError, match="0.0.9"):
        tool.check_binary(str(old))
    with pytest.raises(tool.ToolError, match="no such executable"):
        tool.find_binary(str(tmp_path / "none"))
    with pytest.raises(ValueError, match="profile"):
        tool.SearchOptions(profile="kb")
