"""Tests of ucutlass_torch.reference_kernels: the reference's kernels (aten operators without a GPU)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ucutlass_torch.reference_kernels import main, reference_kernels, render  # noqa: E402

TINY = '''\
"""A tiny linear layer and a ReLU."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''


def test_lists_the_reference_operators_in_launch_order(tmp_path):
    p = tmp_path / "tiny_linear.py"
    p.write_text(TINY)
    r = reference_kernels(str(p), device="cpu")
    assert r["problem"] == "tiny_linear" and r["device"] == "cpu"
    names = [k["name"] for k in r["kernels"]]
    assert "aten::relu" in names
    assert any(n in names for n in ("aten::linear", "aten::addmm")), names
    assert names.index("aten::relu") > max(names.index(n) for n in ("aten::linear", "aten::addmm") if n in names)
    assert all(k["count"] >= 1 for k in r["kernels"])
    text = render(r)
    assert "tiny_linear: aten operators (no GPU)" in text and "`aten::relu`" in text


def test_a_missing_file_is_named_and_fails(tmp_path, capsys):
    missing = tmp_path / "nope.py"
    assert main([str(missing), "--device", "cpu"]) == 1
    err = capsys.readouterr().err
    assert str(missing) in err and "hint" in err
