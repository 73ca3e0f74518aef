"""Tests of ucutlass_torch.extract: the whole problem suite extracts and validates, hand-computed
FLOPs and bytes, the scan peepholes, line numbers, and the error messages for bad problems."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

PYDIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYDIR))

from ucutlass_torch import SCHEMA  # noqa: E402
from ucutlass_torch.extract import extract, summary  # noqa: E402
from ucutlass_torch.loader import ProblemError, problem_files  # noqa: E402
from ucutlass_torch.schema import validate  # noqa: E402

ROOT = PYDIR.parent
SUITE = ROOT / "problems"
SUITE_FILES = problem_files(SUITE)
_CACHE = {}


def ir(name):
    if name not in _CACHE:
        _CACHE[name] = extract(SUITE / f"{name}.py")
    return _CACHE[name]


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


# ------------------------------------------------------------------------------------ the suite

def test_suite_is_large_enough():
    names = [p.stem for p in SUITE_FILES]
    assert len(names) >= 40
    fam = lambda pre: [n for n in names if n.startswith(pre)]  # noqa: E731
    assert len(fam("gemm_")) >= 12
    assert len(fam("epi_")) >= 12
    assert len(fam("gred_")) >= 6
    for pre in ("act_", "red_", "norm_", "scan_", "loss_", "attn_"):
        assert fam(pre), pre


# KernelBench-shaped problems the extractor does not handle yet: the checklist of docs/benchmarks.md's
# "kb suite plan" and "conv suite" tables. Strict: a fix makes its test pass unexpectedly, and the entry must go.
KB_GAPS: dict = {}  # none left: pooling extracts as max_pool / avg_pool / adaptive_avg_pool
SUITE_PARAMS = [pytest.param(p, id=p.stem, marks=pytest.mark.xfail(strict=True, reason=KB_GAPS[p.stem]))
                if p.stem in KB_GAPS else pytest.param(p, id=p.stem) for p in SUITE_FILES]


@pytest.mark.parametrize("path", SUITE_PARAMS)
def test_suite_problem_extracts_and_validates(path):
    doc = ir(path.stem)
    assert doc["schema"] == SCHEMA
    assert validate(doc) == []
    assert doc["ops"], "no ops"
    assert doc["doc"], "every suite problem has a one-line docstring"
    assert all(op["line"] > 0 for op in doc["ops"]), "every op has a line in the problem file"
    assert not [op for op in doc["ops"] if op["op"] == "opaque"], "suite problems use the IR vocabulary only"
    json.dumps(doc, allow_nan=False)  # strict JSON


# ------------------------------------------------------------------- hand-computed FLOPs / bytes
F32, BF16 = 4, 2


def counts(name):
    s = summary(ir(name))
    return s["flops_tensor"], s["flops_simt"], s["bytes_min"]


HAND = {
    # name: (tensor FLOPs, SIMT FLOPs, minimum bytes)
    "gemm_square_4096": (2 * 4096**3, 0, 3 * 4096 * 4096 * F32),
    "gemm_irregular_4000x3000x5000": (2 * 4000 * 3000 * 5000, 0, (4000 * 5000 + 5000 * 3000 + 4000 * 3000) * F32),
    "gemm_bmm_128x512x1024x2048": (2**38, 0, 128 * (512 * 1024 + 1024 * 2048 + 512 * 2048) * F32),
    "gemm_bf16_square_8192": (2 * 8192**3, 0, 3 * 8192 * 8192 * BF16),
    "gemm_gemv_8192x262144": (2 * 8192 * 262144, 0, (8192 * 262144 + 262144 + 8192) * F32),
    "gemm_tt_4096x4096x8192": (2 * 4096 * 4096 * 8192, 0, (2 * 4096 * 8192 + 4096 * 4096) * F32),
    "epi_linear_bias_gelu": (2 * 4096 * 8192 * 8192 + 4096 * 8192, 8 * 4096 * 8192,
                             (4096 * 8192 + 8192 * 8192 + 8192 + 4096 * 8192) * F32),
    "epi_swiglu": (2 * 2 * 4096 * 4096 * 11008, (5 + 1) * 4096 * 11008,
                   (4096 * 4096 + 2 * 11008 * 4096 + 4096 * 11008) * F32),
    "gred_linear_layernorm": (2 * 4096 * 8192 * 8192 + 4096 * 8192, 8 * 4096 * 8192,
                              (4096 * 8192 + 8192 * 8192 + 3 * 8192 + 4096 * 8192) * F32),
    "red_softmax_rows": (0, 6 * 16384**2, 2 * 16384**2 * F32),
    "red_max_cols": (0, 16384**2, 16384**2 * F32 + 16384 * F32 + 16384 * 8),
    "scan_cumsum_exclusive": (0, 2 * 16384**2, 2 * 16384**2 * F32),
    "loss_cross_entropy": (0, 8 * 65536 * 4096, 65536 * 4096 * F32 + 65536 * 8 + F32),
    "loss_kl_div": (0, (4 + 3) * 32768 * 8192 + 1, 2 * 32768 * 8192 * F32 + F32),
    "attn_sdpa_fp32": (4 * 16 * 32 * 1024 * 1024 * 128, 0, 4 * 16 * 32 * 1024 * 128 * F32),
    "attn_sdpa_causal_bf16": (4 * 8 * 32 * 4096 * 4096 * 128 // 2, 0, 4 * 8 * 32 * 4096 * 128 * BF16),
    "norm_rmsnorm": (0, 5 * 32768 * 8192, 2 * 32768 * 8192 * F32 + 8192 * F32),
    "attn_manual_softmax": (2 * 2 * 16 * 16 * 2048 * 2048 * 64, (1 + 6) * 16 * 16 * 2048 * 2048,
                            4 * 16 * 16 * 2048 * 64 * F32),
}


@pytest.mark.parametrize("name", sorted(HAND))
def test_hand_computed_flops_and_bytes(name):
    assert counts(name) == HAND[name]


def test_gemm_bias_gelu_structure_matches_doc_example():
    doc = ir("epi_linear_bias_gelu")
    kinds = {t["name"]: t["kind"] for t in doc["tensors"]}
    assert kinds == {"x": "input", "linear.weight": "parameter", "linear.bias": "parameter",
                     "t0": "intermediate", "out0": "output"}
    assert [(o["op"], o["inputs"], o["outputs"]) for o in doc["ops"]] == [
        ("linear", ["x", "linear.weight", "linear.bias"], ["t0"]), ("gelu", ["t0"], ["out0"])]
    assert doc["ops"][0]["flop_class"] == "tensor" and doc["ops"][1]["flop_class"] == "simt"
    assert doc["ops"][1]["attrs"] == {"approximate": "none"}
    assert doc["init_args"] == [8192, 8192] and doc["inputs"] == ["x"] and doc["outputs"] == ["out0"]
    w = next(t for t in doc["tensors"] if t["name"] == "linear.weight")
    assert w == {"name": "linear.weight", "kind": "parameter", "dtype": "f32", "shape": [8192, 8192],
                 "state_dict": "linear.weight"}


def test_line_numbers_point_at_the_source():
    doc = ir("gred_linear_layernorm")
    lines = (SUITE / "gred_linear_layernorm.py").read_text().splitlines()
    for op in doc["ops"]:
        assert "self.norm(self.linear(x))" in lines[op["line"] - 1]


def test_transposes_are_explicit_ops():
    assert [o["op"] for o in ir("gemm_tt_4096x4096x8192")["ops"]] == ["t", "t", "matmul"]
    ops = ir("gemm_bmm_nt_scores")["ops"]
    assert [o["op"] for o in ops] == ["transpose", "matmul"]
    assert ops[0]["attrs"] == {"dim0": 1, "dim1": 2}  # transpose(-1, -2), canonical order


def test_scan_peepholes():
    rev = ir("scan_cumsum_reverse")["ops"]
    assert [(o["op"], o["attrs"]) for o in rev] == [("cumsum", {"dim": 1, "reverse": True, "exclusive": False})]
    exc = ir("scan_cumsum_exclusive")["ops"]
    assert [(o["op"], o["inputs"], o["attrs"]) for o in exc] == [
        ("cumsum", ["x"], {"dim": 1, "reverse": False, "exclusive": True})]
    # KernelBench's own form (L1 #92): cumsum of cat([zeros, x]).narrow(dim, 0, n); the zeros
    # come from zeros_like(x.select(...)), whose select and unsqueeze are left unused
    kb = ir("kb1_cumsum_exclusive")["ops"]
    assert [(o["op"], o["inputs"], o["attrs"]) for o in kb if o["op"] == "cumsum"] == [
        ("cumsum", ["x"], {"dim": 1, "reverse": False, "exclusive": True})]
    assert not [o for o in kb if o["op"] in ("cat", "slice", "opaque")], kb


def test_multi_output_and_int_dtype():
    doc = ir("red_max_cols")
    assert doc["outputs"] == ["out0", "out1"]
    t = {x["name"]: x for x in doc["tensors"]}
    assert t["out1"]["dtype"] == "i64" and t["out1"]["shape"] == [16384]
    assert doc["ops"][0]["attrs"] == {"dims": [0], "keepdim": False}


def test_bool_mask_and_scalar_operands():
    doc = ir("scan_cumsum_masked")
    t = {x["name"]: x for x in doc["tensors"]}
    assert t["mask"]["dtype"] == "bool"
    hinge = ir("loss_hinge")["ops"]
    assert hinge[1]["op"] == "sub" and hinge[1]["inputs"][0] == {"scalar": 1}
    assert hinge[2]["attrs"] == {"min": 0, "max": None}


# ---------------------------------------------------------------------------- small problems

SMALL = '''\
"""small"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.full((8,), 2.0))
        self.unused = nn.Linear(3, 3)

    def forward(self, x, k):
        y = x * self.scale
        return y + k, x
'''


def test_extra_inputs_buffers_and_passthrough_output(tmp_path):
    p = write(tmp_path, "small.py", SMALL + "\n\ndef get_inputs():\n    return [torch.randn(4, 8), 3]\n\n\n"
              "def get_init_inputs():\n    return []\n")
    doc = extract(p)
    assert validate(doc) == []
    assert doc["inputs"] == ["x"]
    assert doc["extra_inputs"] == [{"index": 1, "value": 3}]
    assert doc["outputs"] == ["out0", "x"]
    names = [t["name"] for t in doc["tensors"]]
    assert "unused.weight" not in names  # only tensors the computation touches
    assert {"name": "scale", "kind": "buffer", "dtype": "f32", "shape": [8], "state_dict": "scale"} in doc["tensors"]
    assert doc["ops"][1]["inputs"] == ["t0", {"scalar": 3}]


def test_huge_problem_never_materializes(tmp_path):
    # 2^40 floats (4 TiB): only fake tensors make this possible.
    p = write(tmp_path, "huge.py", '''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Linear(n, n)
            def forward(self, x):
                return self.fc(x).sum()
        def get_inputs():
            return [torch.randn(1 << 20, 1 << 20)]
        def get_init_inputs():
            return [1 << 20]
        ''')
    doc = extract(p)
    assert doc["ops"][0]["flops"] == 2 * (1 << 60) + (1 << 40)


# ------------------------------------------------------------------------------ error messages

BASE_TAIL = "\n\ndef get_inputs():\n    return [torch.randn(4, 8)]\n\n\ndef get_init_inputs():\n    return []\n"


def test_untraceable_module_names_the_line(tmp_path):
    p = write(tmp_path, "branchy.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                if x.sum() > 0:
                    return x * 2
                return x
        ''') + BASE_TAIL)
    with pytest.raises(ProblemError) as e:
        extract(p)
    msg = str(e.value)
    assert e.value.line == 7
    assert msg.startswith(f"{p}:7: error: cannot trace Model.forward: ")
    assert msg.endswith("\nhint: forward must be traceable by torch.export: no control flow that depends on "
                        "tensor values, no .item()/.tolist(), no Python-side data access")


def test_unsupported_dtype_complex(tmp_path):
    p = write(tmp_path, "cplx.py", '''\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                return x * 2


        def get_inputs():
            return [torch.randn(4, 8, dtype=torch.complex64)]


        def get_init_inputs():
            return []
        ''')
    with pytest.raises(ProblemError) as e:
        extract(p)
    assert str(e.value) == (
        f"{p}: error: unsupported dtype complex64 for input 0 (`x`) from get_inputs()\n"
        "hint: ucutlass handles f16, bf16, f32, f64, i8, i16, i32, i64, u8 and bool tensors; "
        "convert the tensor (e.g. .float() or .real) in the problem file")


def test_unsupported_dtype_inside_forward_names_the_line(tmp_path):
    p = write(tmp_path, "cplx2.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, x):
                y = torch.fft.fft(x)
                return y.real
        ''') + BASE_TAIL)
    with pytest.raises(ProblemError) as e:
        extract(p)
    assert e.value.line == 7
    assert "error: unsupported dtype complex64 for the result of aten::fft_fft" in str(e.value)


def test_missing_get_inputs_via_extract(tmp_path):
    p = write(tmp_path, "nogi.py", "import torch\nclass Model(torch.nn.Module):\n    pass\n\n"
              "def get_init_inputs():\n    return []\n")
    with pytest.raises(ProblemError) as e:
        extract(p)
    assert str(e.value) == (
        f"{p}: error: missing `get_inputs` (a KernelBench problem defines Model, get_inputs and get_init_inputs)\n"
        "hint: define `def get_inputs(): return [<forward inputs>]`")


def test_get_inputs_raises_names_line(tmp_path):
    p = write(tmp_path, "gi.py", '''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                return x + 1
        def get_inputs():
            raise ValueError("no inputs today")
        def get_init_inputs():
            return []
        ''')
    with pytest.raises(ProblemError) as e:
        extract(p)
    assert str(e.value) == (f"{p}:7: error: get_inputs() raised ValueError: no inputs today\n"
                            "hint: make get_inputs() run without arguments and return a list")


def test_buffer_mutation_rejected(tmp_path):
    p = write(tmp_path, "mut.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("acc", torch.zeros(4, 8))
            def forward(self, x):
                self.acc.add_(x)
                return x + 1
        ''') + BASE_TAIL)
    with pytest.raises(ProblemError) as e:
        extract(p)
    assert str(e.value) == (f"{p}:8: error: forward updates the buffer `acc` in place (aten::add_)\n"
                            "hint: compute a new tensor instead (y = x + 1, not x.add_(1)); a problem's inputs and "
                            "module state must stay unchanged")


def test_inplace_on_intermediate_is_functional(tmp_path):
    p = write(tmp_path, "inpl.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(inplace=True)
            def forward(self, x):
                y = x * 2
                y.add_(1)
                return self.act(y)
        ''') + BASE_TAIL)
    doc = extract(p)
    assert validate(doc) == []
    assert [(o["op"], o["inputs"], o["outputs"]) for o in doc["ops"]] == [
        ("mul", ["x", {"scalar": 2}], ["t0"]), ("add", ["t0", {"scalar": 1}], ["t1"]), ("relu", ["t1"], ["out0"])]


def test_min_and_max_of_two_tensors_are_elementwise(tmp_path):
    """torch.min(x, p) with a 0-d parameter (KernelBench L2 #68) is aten::min.other, elementwise;
    it used to extract as a reduction over every dim, which no program could hold."""
    p = write(tmp_path, "minmax.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.c = nn.Parameter(torch.tensor(2.0))
            def forward(self, x):
                return torch.max(torch.min(x, self.c), -self.c)
        ''') + BASE_TAIL)
    doc = extract(p)
    assert validate(doc) == []
    ops = [o["op"] for o in doc["ops"]]
    assert "minimum" in ops and "maximum" in ops and "min" not in ops and "max" not in ops, ops


def test_diag_matmul_is_a_row_scaling(tmp_path):
    """torch.diag(v) @ B (KernelBench L1 #12) extracts as v[:, None] * B; a diag used otherwise
    stays opaque."""
    p = write(tmp_path, "diag.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, a, B):
                return torch.diag(a) @ B, torch.diag(a) + 1
        def get_inputs():
            return [torch.rand(16), torch.rand(16, 8)]
        def get_init_inputs():
            return []
        '''))
    doc = extract(p)
    assert validate(doc) == []
    ops = [(o["op"], o["attrs"].get("target", "")) for o in doc["ops"]]
    assert ops[:2] == [("unsqueeze", ""), ("mul", "")], ops
    assert ("opaque", "aten::diag.default") in ops and ("matmul", "") not in ops, ops
    assert doc["ops"][1]["flops"] == 16 * 8 and doc["ops"][1]["from"] == "torch.diag(v) @ B as v[:, None] * B"


def test_identity_forward_rejected(tmp_path):
    p = write(tmp_path, "ident.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                return x
        ''') + BASE_TAIL)
    with pytest.raises(ProblemError, match="forward performs no operation"):
        extract(p)


def test_opaque_op_keeps_flops(tmp_path):
    p = write(tmp_path, "eins.py", '''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def forward(self, a, b, c):
                return torch.sort(torch.einsum("iik,kj->ij", a, b) + c, dim=1).values
        def get_inputs():
            return [torch.randn(64, 64, 32), torch.randn(32, 16), torch.randn(16)]
        def get_init_inputs():
            return []
        ''')
    doc = extract(p)
    assert validate(doc) == []
    eins, srt = doc["ops"][0], doc["ops"][2]
    assert eins["op"] == "opaque" and eins["attrs"] == {
        "target": "aten::einsum.default", "flops_known": True, "equation": "iik,kj->ij",
        "why": "repeats index 'i' in operand 0 (a diagonal or trace)"}
    assert eins["flops"] == 2 * 64 * 32 * 16 and eins["flop_class"] == "tensor"
    assert srt["attrs"] == {"target": "aten::sort.default", "flops_known": False} and srt["flops"] == 0
    assert srt["outputs"] == ["out0", "t0"] or len(srt["outputs"]) == 2


# --------------------------------------------------------------------------------- command line

def run_cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=str(PYDIR))
    t0 = time.time()
    r = subprocess.run([sys.executable, "-m", "ucutlass_torch.extract", *map(str, args)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    return r, time.time() - t0


def test_cli_single_file_and_folder(tmp_path):
    out = tmp_path / "p.json"
    r, secs = run_cli(SUITE / "gemm_square_4096.py", "-o", out)
    print(f"extract gemm_square_4096 (fresh process, torch import included): {secs:.2f} s")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert validate(doc) == [] and doc["name"] == "gemm_square_4096"

    d = tmp_path / "two"
    d.mkdir()
    for n in ("act_relu", "red_sum_rows"):
        (d / f"{n}.py").write_text((SUITE / f"{n}.py").read_text())
    r, _ = run_cli(d, "-o", tmp_path / "outdir")
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "outdir").iterdir()) == ["act_relu.json", "red_sum_rows.json"]


def test_cli_bad_problem_exit_1(tmp_path):
    p = write(tmp_path, "bad.py", "import torch\n")
    r, _ = run_cli(p, "-o", tmp_path / "bad.json")
    assert r.returncode == 1
    assert r.stderr.startswith(f"{p}: error: missing `Model`, `get_inputs`, `get_init_inputs`")
    assert not (tmp_path / "bad.json").exists()


# ------------------------------------------------------------- non-finite values, conversions

NON_FINITE = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, lim):
        super().__init__()
        self.register_buffer("mask", torch.tril(torch.ones(4, 4)))
        self.lim = lim

    def forward(self, x, fill):
        y = x.masked_fill(self.mask == 0, float("-inf"))
        y = F.hardtanh(torch.clamp(y, max=self.lim), min_val=float("-inf"), max_val=1.0)
        c = torch.full((4,), float("nan"))
        t = torch.tensor([float("-inf"), 0.0, 1.0, 2.0])
        return torch.softmax(y, -1) + c + t * fill


def get_inputs():
    return [torch.randn(4, 4), float("inf")]


def get_init_inputs():
    return [float("inf")]
'''


def test_non_finite_numbers_are_strings_everywhere(tmp_path):
    # a causal mask's -inf (level-3 attention, Mamba2's segsum) used to write bare -Infinity, which
    # the C++ reader refused as invalid JSON
    from ucutlass_torch.extract import dumps

    doc = extract(write(tmp_path, "nonfinite.py", NON_FINITE))
    assert validate(doc) == []
    text = dumps(doc)  # strict: raises on a float NaN or infinity
    assert "Infinity" not in text and "NaN" not in text
    ops = {o["op"]: o for o in doc["ops"]}
    assert ops["masked_fill"]["inputs"][2] == {"scalar": "-inf"}
    assert ops["clamp"]["attrs"] == {"min": None, "max": "inf"}
    assert ops["hardtanh"]["attrs"] == {"min_val": "-inf", "max_val": 1.0}
    assert ops["mul"]["inputs"][1] == {"scalar": "inf"}
    values = [t.get("value") for t in doc["tensors"] if t["kind"] == "constant"]
    assert "nan" in values and ["-inf", 0.0, 1.0, 2.0] in values
    assert doc["init_args"] == ["inf"] and doc["extra_inputs"] == [{"index": 1, "value": "inf"}]


CONVERTS = '''\
import torch
import torch.nn as nn

device = torch.device("cuda")


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16).half()
        self.pair = nn.Sequential(nn.Linear(16, 16), nn.Linear(16, 16, bias=False))
        self.pair[1].weight = self.pair[0].weight  # tied: converted once, still shared
        self.pair.to(device).bfloat16()

    def forward(self, x):
        h = self.fc(x.to(device).half())
        h = self.pair(h.to(self.pair[0].weight.dtype))
        return h.float().to(x.device)


def get_inputs():
    return [torch.randn(4, 8).cuda()]


def get_init_inputs():
    return []
'''


def test_model_converting_its_parameters_and_moving_devices(tmp_path):
    # nn.Linear(...).half() in __init__ used to fail: "_apply(): Couldn't swap Linear.weight"
    doc = extract(write(tmp_path, "converts.py", CONVERTS))
    assert validate(doc) == []
    dt = {t["name"]: t["dtype"] for t in doc["tensors"] if t["kind"] != "intermediate"}
    tied = doc["ops"][3]["inputs"][1]
    assert dt == {"x": "f32", "fc.weight": "f16", "fc.bias": "f16", "pair.0.bias": "bf16", tied: "bf16", "out0": "f32"}
    assert [(o["op"], o["attrs"].get("dtype")) for o in doc["ops"]] == [
        ("to", "f16"), ("linear", None), ("to", "bf16"), ("linear", None), ("linear", None), ("to", "f32")]
    assert doc["ops"][4]["inputs"][1] == tied  # still one tensor


# ------------------------------------------------------------------------------- time limit

HANGS = (ROOT / "tests" / "data" / "problems" / "inputs_never_return.py").read_text()


def test_deadline_notes_progress_then_stops_naming_the_line(tmp_path, capsys):
    # a get_inputs() that never returns used to keep extraction silent for ten minutes
    import torch  # noqa: F401 - imported before the clock starts, as the command line does
    from ucutlass_torch.deadline import ExtractTimeout, deadline

    p = write(tmp_path, "hangs.py", HANGS)
    t0 = time.time()
    with pytest.raises(ExtractTimeout) as e:
        with deadline(str(p), 1.5, note_after_s=0.5):
            extract(p)
    assert time.time() - t0 < 30
    assert str(e.value) == (
        f"{p}:12: error: extraction did not finish within 1.5 s (stopped in get_inputs())\n"
        "hint: make get_inputs() finish on a CPU (a loop that never ends?), or allow more time: "
        "ucutlass extract --timeout SECONDS, or UCUTLASS_EXTRACT_TIMEOUT=SECONDS")
    err = capsys.readouterr().err
    assert err.split("still extracting after ")[0] == f"{p}: note: ", err
    assert err.split(" s, ", 1)[1].startswith("in get_inputs() at line 12 (limit 1.5 s)\n"), err


def test_cli_time_limit_keeps_going_and_ends_a_stuck_c_call(tmp_path):
    # --keep-going: the next problem still extracts. A C call that never returns to the
    # interpreter cannot take the exception: the watchdog ends the process (one that releases the
    # GIL: with the diagnostic; one that holds it: faulthandler, with the stacks).
    d = tmp_path / "two"
    d.mkdir()
    write(d, "a_hangs.py", HANGS)
    (d / "b_relu.py").write_text((SUITE / "act_relu.py").read_text())
    r, _ = run_cli(d, "-o", tmp_path / "out", "--keep-going", "--timeout", "2")
    assert r.returncode == 1
    assert f"{d / 'a_hangs.py'}:12: error: extraction did not finish within 2 s (stopped in get_inputs())" in r.stderr
    assert (tmp_path / "out" / "b_relu.json").exists()

    stuck = write(tmp_path, "stuck.py", "import hashlib\n" + HANGS.replace(
        "while True:\n        pass", "return [hashlib.pbkdf2_hmac('sha256', b'x', b'y', 2_000_000_000)]"))
    r, secs = run_cli(stuck, "--timeout", "3")
    assert r.returncode == 1 and secs < 60
    assert f"{stuck}:13: error: extraction did not finish within 3 s (stopped in get_inputs())" in r.stderr
    held = write(tmp_path, "held.py", HANGS.replace("while True:\n        pass", "return [sum(range(10**15))]"))
    r, secs = run_cli(held, "--timeout", "3")
    assert r.returncode == 1 and secs < 60
    assert f'File "{held}", line 12 in get_inputs' in r.stderr


def test_cli_rejects_a_bad_time_limit(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(PYDIR), UCUTLASS_EXTRACT_TIMEOUT="soon")
    r = subprocess.run([sys.executable, "-m", "ucutlass_torch.extract", str(SUITE / "act_relu.py")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2
    assert r.stderr == "error: UCUTLASS_EXTRACT_TIMEOUT='soon' is not a positive number of seconds\n"


def test_triangular_mask_buffers_carry_their_structure(tmp_path):
    """A registered tril(ones) mask that reaches a masked_fill is marked {"kind": "tril", ...} (the
    lowering folds it into a causal mask); a mask of other values, or a buffer no masked_fill reads,
    is not."""
    p = write(tmp_path, "masks.py", textwrap.dedent('''\
        import torch
        import torch.nn as nn
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("causal", torch.tril(torch.ones(16, 16)).view(1, 1, 16, 16))
                self.register_buffer("upper", torch.triu(torch.ones(16, 16), diagonal=1).bool())
                self.register_buffer("noise", (torch.rand(16, 16) > 0.5).float())
                self.register_buffer("scale", torch.tril(torch.ones(16, 16)))
            def forward(self, x):
                a = x.masked_fill(self.causal[:, :, :8, :8] == 0, float("-inf"))
                b = x.masked_fill(self.upper[:8, :8], 0.0)
                c = x.masked_fill(self.noise[:8, :8] == 0, 1.0)
                return a + b + c + self.scale[:8, :8]
        def get_inputs():
            return [torch.randn(2, 3, 8, 8)]
        def get_init_inputs():
            return []
        '''))
    doc = extract(p)
    assert validate(doc) == []
    by = {t["name"]: t for t in doc["tensors"]}
    assert by["causal"]["structure"] == {"kind": "tril", "diagonal": 0}
    assert by["upper"]["structure"] == {"kind": "triu", "diagonal": 1}
    assert "structure" not in by["noise"]
    assert "structure" not in by["scale"]  # triangular, but no masked_fill reads it


def test_triangle_structure_of_values():
    import torch

    from ucutlass_torch.extract import triangle_structure

    assert triangle_structure(torch.tril(torch.ones(1, 1, 8, 8), -2)) == {"kind": "tril", "diagonal": -2}
    assert triangle_structure(torch.triu(torch.ones(6, 9), 3).bool()) == {"kind": "triu", "diagonal": 3}
    assert triangle_structure(torch.tril(torch.ones(6, 9), 2).half()) == {"kind": "tril", "diagonal": 2}
    for other in (torch.ones(4, 4), torch.eye(4), torch.tril(torch.ones(2, 8, 8)), torch.tril(torch.ones(5, 7)) * 2,
                  torch.zeros(3, 3), torch.ones(4)):
        assert triangle_structure(other) is None, other
