"""Per-stage times (docs/eval-contract.md, "Per-stage times"; docs/kernel-abi.md ucut_run_timed):
after every verdict an ok candidate of several stages runs PROFILE_REPS more times with a time per
stage, each run from NaN outputs; the result's ``stage_ms`` names each stage. On CPU with Python
stand-in kernels (kernel.PyKernel's ``stage_ms`` stands in for ucut_run_timed)."""

import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import guard, kernel, worker  # noqa: E402
from ucutlass_torch.worker import Worker  # noqa: E402

RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2

def get_inputs():
    return [torch.randn(64, 256)]

def get_init_inputs():
    return []
'''

TENSORS = [{"name": "x", "role": "in", "dtype": "f32", "shape": [64, 256], "index": 0},
           {"name": "y", "role": "out", "dtype": "f32", "shape": [64, 256], "index": 0}]
TWO = {"abi": 1, "name": "relu2", "tensors": TENSORS,
       "stages": [{"name": "t0", "kind": "elementwise", "config": "elementwise_th128_v2"},
                  {"name": "y", "kind": "elementwise", "config": "elementwise_th256_v4"}]}
ONE = dict(TWO, stages=TWO["stages"][:1])


@pytest.fixture
def relu(tmp_path, monkeypatch):
    monkeypatch.setattr(guard, "GUARD_BYTES", 64 * 1024)
    p = tmp_path / "relu.py"
    p.write_text(textwrap.dedent(RELU))
    w = Worker("cpu")
    w.load(str(p))
    return w


def correct(t, s):
    torch.mul(torch.clamp(t[0], min=0), 2, out=t[1])


class Profiled:
    """A stand-in's launches and the per-stage times it reports, run by run."""

    def __init__(self, fn=correct):
        self.fn, self.runs, self.profiled, self.nan_before_profile = fn, 0, 0, []

    def launch(self, t, s):
        self.runs += 1
        self.last_nan = bool(torch.isnan(t[1]).all())
        self.fn(t, s)

    def stage_ms(self):
        self.profiled += 1
        self.nan_before_profile.append(self.last_nan)
        return [0.25 * self.profiled, 1.0]


def test_an_ok_candidate_of_several_stages_reports_each_stages_median(relu):
    p = Profiled()
    r = relu.evaluate(kernel.PyKernel(TWO, p.launch, stage_ms=p.stage_ms), min_reps=30)
    assert r["verdict"] == "ok", r["error"]
    assert p.profiled == worker.PROFILE_REPS == 3
    # each profile run starts from NaN outputs, as a timed repetition does
    assert p.nan_before_profile == [True] * 3
    # the median of 0.25, 0.5, 0.75 and of 1.0 x3, named as ucut_describe names the stages
    assert r["stage_ms"] == [{"stage": "t0", "kind": "elementwise", "config": "elementwise_th128_v2", "ms": 0.5},
                             {"stage": "y", "kind": "elementwise", "config": "elementwise_th256_v4", "ms": 1.0}]
    assert "profile" in r["seconds"]


def test_no_profile_for_one_stage_a_mismatch_or_when_not_asked(relu):
    p = Profiled()
    r = relu.evaluate(kernel.PyKernel(ONE, p.launch, stage_ms=p.stage_ms), min_reps=30)
    assert r["verdict"] == "ok" and "stage_ms" not in r and p.profiled == 0

    p = Profiled(lambda t, s: t[1].copy_(t[0]))
    r = relu.evaluate(kernel.PyKernel(TWO, p.launch, stage_ms=p.stage_ms), min_reps=30)
    assert r["verdict"] == "mismatch" and "stage_ms" not in r and p.profiled == 0

    p = Profiled()
    r = relu.evaluate(kernel.PyKernel(TWO, p.launch, stage_ms=p.stage_ms), min_reps=30, profile_stages=False)
    assert r["verdict"] == "ok" and "stage_ms" not in r and p.profiled == 0

    # a library without ucut_run_timed (an older one): ok, no stage_ms, no profile phase at all
    r = relu.evaluate(kernel.PyKernel(TWO, correct), min_reps=30)
    assert r["verdict"] == "ok" and "stage_ms" not in r and "profile" not in r["seconds"]


class StrayInProfile(kernel.PyKernel):
    """Correct in every checked and timed run; writes past its output when its stages are timed."""

    times_stages = True

    def stage_times(self, tensors, scalars, workspace, stream):
        self.launch(tensors, scalars, workspace, stream)
        y = tensors[1]
        torch.as_strided(y, (16,), (1,), y.storage_offset() + y.numel()).fill_(1.0)
        return [0.1, 0.2]


def test_a_stray_write_while_profiled_rejects_the_candidate(relu):
    r = relu.evaluate(StrayInProfile(TWO, correct), min_reps=30)
    assert r["verdict"] == "rejected" and r["phase"] == "profile", r
    assert "wrote outside its outputs" in r["error"]
    assert "stage_ms" not in r


FAKE_LIBRARY = r'''
#include <stddef.h>
static char err[64];
int ucut_abi_version(void) { return 1; }
const char* ucut_describe(void) {
  return "{\"abi\": 1, \"name\": \"fake\", \"tensors\": [], \"scalars\": [],"
         " \"stages\": [{\"name\": \"a\", \"kind\": \"gemm\", \"config\": \"g\"},"
         " {\"name\": \"b\", \"kind\": \"rowwise\", \"config\": \"r\"}]}";
}
const char* ucut_last_error(void) { return err; }
int ucut_workspace_size(size_t* bytes) { *bytes = 0; return 0; }
int ucut_run(void* const* t, int nt, const double* s, int ns, void* ws, size_t wsb, void* stream) { return 0; }
int ucut_run_timed(void* const* t, int nt, const double* s, int ns, void* ws, size_t wsb, void* stream,
                   float* stage_ms, int n) {
  if (n < 2) { err[0] = 'n'; err[1] = 0; return 1; }
  stage_ms[0] = 0.5f; stage_ms[1] = 1.5f;
  return FAIL;
}
'''


@pytest.mark.parametrize("fail", [0, 4])
def test_the_runtime_calls_ucut_run_timed_through_ctypes(tmp_path, fail):
    # A C library with the ABI's symbols (no CUDA): the ctypes signature, the buffer of one float
    # a stage, and a failing code raised as the kernel's error.
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src, so = tmp_path / "fake.c", tmp_path / "fake.so"
    src.write_text(FAKE_LIBRARY)
    subprocess.run([cc, "-shared", "-fPIC", f"-DFAIL={fail}", "-o", str(so), str(src)], check=True)
    k = kernel.CtypesKernel(str(so))
    assert k.rt.has_stage_times
    if fail:
        with pytest.raises(kernel.KernelError, match="returned 4"):
            k.stage_times([], [], None, None)
    else:
        assert k.stage_times([], [], None, None) == [0.5, 1.5]
