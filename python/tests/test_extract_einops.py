"""KernelBench problems import einops (level 3's Mamba2: `from einops import rearrange`), and a
problem is extracted by running it: scripts/setup installs einops, pinned, so such a problem
extracts instead of failing with "the file imports `einops`, which ... cannot find"."""

import sys
import textwrap
from pathlib import Path

import torch

PYDIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYDIR))

from ucutlass_torch.extract import extract  # noqa: E402
from ucutlass_torch.schema import validate  # noqa: E402

MAMBA_BLOCKS = '''\
import torch
import torch.nn as nn
from einops import rearrange


class Model(nn.Module):
    def __init__(self, block_len):
        super().__init__()
        self.block_len = block_len

    def forward(self, x):
        # Mamba2's chunking: the sequence cut into blocks of block_len
        blocks = rearrange(x, "b (c l) h -> b c l h", l=self.block_len)
        return torch.relu(blocks) * 2.0


def get_inputs():
    return [torch.randn(2, 8, 4)]


def get_init_inputs():
    return [4]
'''


def test_a_problem_importing_einops_extracts(tmp_path):
    p = tmp_path / "mamba_blocks.py"
    p.write_text(textwrap.dedent(MAMBA_BLOCKS))
    doc = extract(p)
    assert validate(doc) == []
    shapes = {t["name"]: t["shape"] for t in doc["tensors"]}
    (out,) = doc["outputs"]
    assert shapes[out] == [2, 2, 4, 4]
    # rearrange is a reshape to the IR, as the same view written in torch would be
    assert [op["op"] for op in doc["ops"]] == ["reshape", "relu", "mul"]


def test_setup_pins_the_einops_it_installs():
    import einops

    setup = (PYDIR.parent / "scripts" / "setup").read_text()
    assert f"EINOPS_VERSION={einops.__version__}\n" in setup, (
        f"scripts/setup pins another einops than the {einops.__version__} installed; run scripts/setup")
