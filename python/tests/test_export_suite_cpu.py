"""Every suite problem's KernelBench export (problems/, issue 36 item 15) through KernelBench's
protocol, on the CPU: each problem is extracted, lowered and its library source emitted (no nvcc),
its ModelNew rendered from that library's ucut_describe() and exec'd as KernelBench does; then, on
the meta device (the suite's sizes are GPU-sized), Model and ModelNew are built after
set_seed(42) from the same init inputs, and ModelNew's forward runs with a stub in place of the
library: every tensor must reach the library in its declared shape and dtype (bound as the worker
binds it), and every output must come back in the reference's shape and dtype (KernelBench
compares shapes before values; test_export_gpu.py compares values on real exports).

Needs the ucutlass binary ($UCUT_BIN, else build/ucutlass or build-gpu/ucutlass); skipped without it."""

import json
import os
import re
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

from ucutlass_torch import export, loader  # noqa: E402
from ucutlass_torch.binding import DTYPES  # noqa: E402
from host_kernels import binary  # noqa: E402

PROBLEMS = os.path.join(ROOT, "problems")
NAMES = sorted(f[:-3] for f in os.listdir(PROBLEMS) if f.endswith(".py") and not f.startswith("_"))


BIN = binary()
pytestmark = pytest.mark.skipif(not BIN, reason="needs the ucutlass binary (build/ucutlass or $UCUT_BIN)")


def describe_of(cu_path):
    """ucut_describe()'s JSON from the generated library source: the one string literal it returns
    (its escapes are JSON's)."""
    with open(cu_path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r'UCUT_EXPORT const char\* ucut_describe\(void\) \{\s*return (".*?");\s*\}', text, re.S)
    assert m, f"{cu_path}: no ucut_describe"
    return json.loads(json.loads(m.group(1)))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """name -> (problem.json, library source or None when the problem does not lower)."""
    out = tmp_path_factory.mktemp("suite")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    p = subprocess.run([sys.executable, "-m", "ucutlass_torch.extract", PROBLEMS, "-o", str(out) + os.sep,
                        "--keep-going"], capture_output=True, text=True, env=env, timeout=1800)
    result = {}
    for name in NAMES:
        ir = out / f"{name}.json"
        if not ir.exists():
            result[name] = (None, None)
            continue
        prog = out / f"{name}.ucut"
        low = subprocess.run([BIN, "lower", str(ir)], capture_output=True, text=True, timeout=600)
        if low.returncode != 0:
            result[name] = (str(ir), None)
            continue
        prog.write_text(low.stdout)
        em = subprocess.run([BIN, "compile", str(prog), "--emit-only", "-o", str(out / name)], capture_output=True,
                            text=True, timeout=600)
        assert em.returncode == 0, f"{name}: {em.stderr}"
        [cu] = [f for f in os.listdir(out / name) if f.endswith(".cu")]
        result[name] = (str(ir), str(out / name / cu))
    assert any(cu for _, cu in result.values()), p.stderr[-2000:]
    return result


class StubLibrary:
    """In place of the library: every tensor in its declared shape and dtype, contiguous."""

    workspace_bytes = 0

    def __init__(self, tensors):
        self.tensors = tensors

    def run(self, args, workspace):
        assert len(args) == len(self.tensors)
        for a, t in zip(args, self.tensors):
            assert list(a.shape) == t["shape"], f"{t['role']} {t['name']}: {list(a.shape)} reached the library, " \
                                                f"declared {t['shape']}"
            assert a.dtype == DTYPES[t["dtype"]] and a.is_contiguous(), t


def meta_inputs(doc):
    """get_inputs() on the meta device from the Problem IR (its tensor inputs and the other values)."""
    by = {t["name"]: t for t in doc["tensors"]}
    extra = {e["index"]: e["value"] for e in doc.get("extra_inputs", [])}
    tensors = iter(doc["inputs"])
    values = []
    for i in range(len(doc["inputs"]) + len(extra)):
        if i in extra:
            values.append(extra[i])
        else:
            t = by[next(tensors)]
            values.append(torch.empty(t["shape"], dtype=DTYPES[t["dtype"]], device="meta"))
    return values


@pytest.mark.parametrize("name", NAMES)
def test_the_export_binds_and_returns_the_references_shapes(built, name):
    ir, cu = built[name]
    assert ir, f"{name} did not extract"
    if cu is None:
        pytest.skip(f"{name} does not lower: its model_new.py is the PyTorch fallback (the reference itself)")
    path = os.path.join(PROBLEMS, name + ".py")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    src = export.render(describe_of(cu), "/nonexistent/k.so", source, name + ".ucut", name,
                        export.reference_outputs(path, ir))
    assert "try:" not in src and "except" not in src and "\n    pass" not in src  # KB's static checker
    new_ns, ref_ns = {}, {}
    exec(compile(src, "<string>", "exec"), new_ns)
    exec(compile(source, "<string>", "exec"), ref_ns)
    new_ns["_require_cuda"] = lambda tensors: None
    with open(ir, encoding="utf-8") as f:
        doc = json.load(f)
    with torch.device("meta"), loader._placed("meta"):
        init = ref_ns["get_init_inputs"]()
        torch.manual_seed(42)
        ref = ref_ns["Model"](*init)
        torch.manual_seed(42)
        new = new_ns["ModelNew"](*init)
    assert list(ref.state_dict()) == list(new.state_dict())
    new._library = StubLibrary(new_ns["KERNEL_TENSORS"])
    inputs = meta_inputs(doc)
    with torch.no_grad():
        want, got = ref(*inputs), new(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, f"output {i}: {g.dtype} {list(g.shape)}, the reference " \
                                                          f"returns {w.dtype} {list(w.shape)}"
