"""Tests of ucutlass_torch.loader: loading KernelBench-format files, errors, folders, seeding."""

import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ucutlass_torch.loader import (ProblemError, build_model, iter_problems, load_problem,  # noqa: E402
                                   make_inputs, problem_files)

GOOD = '''\
"""A tiny linear layer."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n)

    def forward(self, x):
        return torch.relu(self.fc(x))


def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return [8, 3]
'''


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_load_good(tmp_path):
    p = write(tmp_path, "lin.py", GOOD)
    lp = load_problem(p)
    assert lp.name == "lin"
    assert lp.doc == "A tiny linear layer."
    assert lp.init_inputs == [8, 3]
    assert len(lp.source_sha256) == 64
    import hashlib
    assert lp.source_sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    # isolated: not left in sys.modules
    assert not any(m.startswith("_ucutlass_problem_lin") for m in sys.modules)


def test_missing_get_inputs(tmp_path):
    p = write(tmp_path, "nogi.py", GOOD.replace("def get_inputs", "def get_inputz"))
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert str(e.value) == (
        f"{p}: error: missing `get_inputs` (a KernelBench problem defines Model, get_inputs and get_init_inputs)\n"
        "hint: define `def get_inputs(): return [<forward inputs>]`")


def test_missing_model(tmp_path):
    p = write(tmp_path, "nomodel.py", GOOD.replace("class Model(", "class Net("))
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert str(e.value) == (
        f"{p}: error: missing `Model` (a KernelBench problem defines Model, get_inputs and get_init_inputs)\n"
        "hint: define `class Model(nn.Module)` with __init__(*init_inputs) and forward(*inputs)")


def test_missing_two(tmp_path):
    p = write(tmp_path, "two.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert "missing `get_inputs`, `get_init_inputs`" in str(e.value)


def test_syntax_error_names_line(tmp_path):
    p = write(tmp_path, "syn.py", "import torch\n\ndef get_inputs(:\n    return []\n")
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert e.value.line == 3
    assert str(e.value).startswith(f"{p}:3: error: syntax error: ")
    assert str(e.value).endswith("\nhint: fix the Python syntax")


def test_import_time_exception_names_line(tmp_path):
    p = write(tmp_path, "boom.py", "import torch\nX = 1\nY = X / 0\n")
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert str(e.value).startswith(f"{p}:3: error: executing the file failed: ZeroDivisionError: division by zero")


def test_missing_import_names_the_module_and_the_fix(tmp_path):
    # used to surface in `ucutlass optimize` as "the Python extractor cannot run ... set UCUTLASS_PYTHON"
    p = write(tmp_path, "needs.py", "import torch\nimport einops_not_installed.layers\n")
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert str(e.value) == (
        f"{p}:2: error: the file imports `einops_not_installed`, which {sys.executable} cannot find\n"
        "hint: install the package that provides `einops_not_installed` into that Python (e.g. "
        f"`{sys.executable} -m pip install einops_not_installed`), or set UCUTLASS_PYTHON to a Python that has it")


def test_model_not_module(tmp_path):
    p = write(tmp_path, "notmod.py", GOOD.replace("class Model(nn.Module):", "class Model:"))
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert "`Model` is a type, not a subclass of torch.nn.Module" in str(e.value)


def test_get_init_inputs_not_list(tmp_path):
    p = write(tmp_path, "bad_init.py", GOOD.replace("return [8, 3]", "return 8"))
    with pytest.raises(ProblemError) as e:
        load_problem(p)
    assert str(e.value) == (f"{p}: error: get_init_inputs() returned a int, not a list\n"
                            "hint: return a list from get_init_inputs(), e.g. `return [x]`")


def test_not_python_and_missing(tmp_path):
    with pytest.raises(ProblemError, match="no such file"):
        load_problem(tmp_path / "nope.py")
    t = write(tmp_path, "x.txt", "hello")
    with pytest.raises(ProblemError, match="not a Python file"):
        load_problem(t)


def test_build_model_is_seeded_and_eval(tmp_path):
    import torch

    lp = load_problem(write(tmp_path, "lin.py", GOOD))
    m1 = build_model(lp, seed=42)
    m2 = build_model(lp, seed=42)
    m3 = build_model(lp, seed=7)
    assert not m1.training
    assert torch.equal(m1.fc.weight, m2.fc.weight)
    assert not torch.equal(m1.fc.weight, m3.fc.weight)
    # same as KernelBench: manual_seed then Model(*get_init_inputs())
    torch.manual_seed(42)
    ref = lp.Model(8, 3)
    assert torch.equal(ref.fc.weight, m1.fc.weight)
    m4 = build_model(lp, dtype=torch.float64)
    assert m4.fc.weight.dtype == torch.float64


def test_make_inputs_seeded(tmp_path):
    import torch

    lp = load_problem(write(tmp_path, "lin.py", GOOD))
    a = make_inputs(lp, seed=1)
    b = make_inputs(lp, seed=1)
    c = make_inputs(lp, seed=2)
    assert torch.equal(a[0], b[0]) and not torch.equal(a[0], c[0])
    assert make_inputs(lp, seed=1, dtype=torch.bfloat16)[0].dtype == torch.bfloat16


CONVERTING = '''\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n).half().cuda()
        self.out = nn.Linear(n, n).to("cuda")

    def forward(self, x):
        return self.out(self.fc(x.half()).float())


def get_inputs():
    return [torch.randn(4, 8, device="cuda")]


def get_init_inputs():
    return [8, 3]
'''


def test_build_model_keeps_conversions_and_places_on_the_device(tmp_path):
    # The model's own .half() stays (the worker's reference is the problem as written); the devices
    # it names mean the evaluation's device, so this builds and runs on a CPU-only machine too.
    import torch

    lp = load_problem(write(tmp_path, "conv.py", CONVERTING))
    m = build_model(lp, seed=42, device="cpu")
    assert (m.fc.weight.dtype, m.fc.weight.device.type) == (torch.float16, "cpu")
    assert (m.out.weight.dtype, m.out.weight.device.type) == (torch.float32, "cpu")
    (x,) = make_inputs(lp, seed=1, device="cpu")
    assert x.device.type == "cpu" and m(x).dtype == torch.float32


def test_build_model_on_a_gpu_keeps_conversions(tmp_path):
    # What the worker does on the GPU (skipped without one): the f16 layer stays f16, on the device.
    import torch

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    lp = load_problem(write(tmp_path, "conv.py", CONVERTING))
    m = build_model(lp, seed=42, device="cuda:0")
    assert (m.fc.weight.dtype, m.fc.weight.device.type) == (torch.float16, "cuda")
    (x,) = make_inputs(lp, seed=1, device="cuda:0")
    y = m(x)
    assert y.dtype == torch.float32 and y.device.type == "cuda" and torch.isfinite(y).all()


def test_iter_folder_and_kernelbench_layout(tmp_path):
    d = tmp_path / "suite"
    d.mkdir()
    write(d, "b.py", GOOD)
    write(d, "a.py", GOOD)
    write(d, "_helper.py", "X = 1\n")
    assert [p.name for p in problem_files(d)] == ["a.py", "b.py"]
    assert [lp.name for lp in iter_problems(d)] == ["a", "b"]
    kb = tmp_path / "KernelBench"
    for lvl in ("level2", "level1", "level10"):
        (kb / "KernelBench" / lvl).mkdir(parents=True)
    write(kb / "KernelBench" / "level1", "10_Ten.py", GOOD)
    write(kb / "KernelBench" / "level1", "2_Two.py", GOOD)
    write(kb / "KernelBench" / "level2", "1_One.py", GOOD)
    write(kb / "KernelBench" / "level10", "1_X.py", GOOD)
    names = [f"{p.parent.name}/{p.name}" for p in problem_files(kb)]
    assert names == ["level1/2_Two.py", "level1/10_Ten.py", "level2/1_One.py", "level10/1_X.py"]
    # a single file is itself
    assert problem_files(d / "a.py") == [d / "a.py"]
