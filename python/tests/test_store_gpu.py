"""The kernel store on a GPU (issue 37; CTest label `gpu` through tests/gpu/run_eval_gpu_tests.sh):
one stored kernel unit (bench/store/bf16_bias_gelu.ucut.in) built by `ucutlass compile` at three
shapes into one cache: the first build compiles the unit, the other two take it from the store
(2 units, 1 from cache), and each library computes GELU(x @ W.T + b) within bf16 tolerance of
PyTorch. Needs a CUDA GPU, the ucutlass binary ($UCUT_GPU_BIN, else build-gpu/ or build/), nvcc and
the CUTLASS headers; skipped otherwise."""

import ctypes
import os
import subprocess
import sys

import pytest

from gpu_helpers import have_gpu, ucutlass_binary

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))


BIN = ucutlass_binary()
pytestmark = pytest.mark.skipif(not (BIN and have_gpu()), reason="needs a CUDA GPU and the ucutlass binary")

SHAPES = [(512, 1024, 256), (1024, 512, 512), (256, 2048, 128)]


def test_one_stored_unit_runs_three_shapes(tmp_path):
    import torch
    from ucutlass_torch.kernel import CtypesKernel
    env = dict(os.environ, UCUTLASS_CACHE=str(tmp_path / "cache"))
    template = open(os.path.join(ROOT, "bench", "store", "bf16_bias_gelu.ucut.in")).read()
    units = set()
    for i, (m, n, k) in enumerate(SHAPES):
        prog = tmp_path / f"p{i}.ucut"
        prog.write_text(template.replace("@M@", str(m)).replace("@N@", str(n)).replace("@K@", str(k)))
        out = subprocess.run([BIN, "compile", str(prog), "-o", str(tmp_path / f"lib{i}")], capture_output=True,
                             text=True, timeout=900, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        want = "(0 from cache)" if i == 0 else "(1 from cache)"
        assert f"from 2 units {want}" in out.stdout, out.stdout
        units |= {f for f in os.listdir(tmp_path / f"lib{i}" / f"bf16_bias_gelu_{m}x{n}x{k}.units") if f.startswith("ucut_k")}
        kern = CtypesKernel(str(tmp_path / f"lib{i}" / f"bf16_bias_gelu_{m}x{n}x{k}.so"))
        assert [s.get("unit") for s in kern.describe["stages"]] == [os.path.splitext(min(units))[0]]
        torch.manual_seed(i)
        x = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        w = (torch.randn(n, k, device="cuda") / k ** 0.5).to(torch.bfloat16)
        b = torch.randn(n, device="cuda").to(torch.bfloat16)
        y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ws = torch.empty(max(kern.workspace_bytes, 1), dtype=torch.uint8, device="cuda")
        ptrs = (ctypes.c_void_p * 4)(*[t.data_ptr() for t in (x, w, b, y)])
        rc = kern.lib.ucut_run(ptrs, 4, None, 0, ctypes.c_void_p(ws.data_ptr()), kern.workspace_bytes,
                               ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        assert rc == 0, kern.last_error()
        torch.cuda.synchronize()
        ref = torch.nn.functional.gelu(x.float() @ w.float().T + b.float())
        assert torch.isfinite(y.float()).all()
        assert torch.allclose(y.float(), ref, atol=1e-2, rtol=1e-2), float((y.float() - ref).abs().max())
    assert len(units) == 1, units  # one stored unit for the three shapes
