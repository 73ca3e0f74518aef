"""The correctness protocol and the worker's evaluate path on CPU, with Python stand-in kernels
(kernel.PyKernel) in place of a CUDA library: every way a kernel can be wrong that the contract
names must come out as `mismatch` (or `launch_error`), and a correct kernel as `ok`."""

import json
import math
import os
import subprocess
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import correctness, kernel, timing
from ucutlass_torch.worker import Worker

AFFINE = '''
"""out = x * w + b"""
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        return x * self.w + self.lin.bias

def get_inputs():
    return [torch.rand(64, 32)]

def get_init_inputs():
    return [32]
'''

SOFTMAX = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)

def get_inputs():
    return [torch.rand(32, COLS)]

def get_init_inputs():
    return []
'''


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


AFFINE_DESC = {
    "abi": 1, "name": "affine", "program_hash": "0" * 64,
    "tensors": [
        {"name": "x", "role": "in", "dtype": "f32", "shape": [64, 32], "index": 0},
        {"name": "w", "role": "param", "dtype": "f32", "shape": [32], "binding": "w"},
        {"name": "b", "role": "param", "dtype": "f32", "shape": [32], "binding": "lin.bias"},
        {"name": "y", "role": "out", "dtype": "f32", "shape": [64, 32], "index": 0},
    ],
    "scalars": [],
}


def softmax_desc(cols):
    return {"abi": 1, "name": "softmax", "tensors": [
        {"name": "x", "role": "in", "dtype": "f32", "shape": [32, cols], "index": 0},
        {"name": "y", "role": "out", "dtype": "f32", "shape": [32, cols], "index": 0}]}


@pytest.fixture
def affine(tmp_path):
    w = Worker("cpu")
    w.load(write(tmp_path, "affine.py", AFFINE))
    return w


def evaluate(w, desc, fn, **kw):
    kw.setdefault("min_reps", 30)
    return w.evaluate(kernel.PyKernel(desc, fn), **kw)


def correct_affine(t, s):
    x, wt, b, y = t
    y.copy_(x * wt + b)


def test_correct_kernel_passes_every_trial(affine):
    r = evaluate(affine, AFFINE_DESC, correct_affine)
    assert r["verdict"] == "ok", r["error"]
    c = r["correctness"]
    assert c["passed"] and not c["degenerate"] and c["deterministic"]
    kinds = [t["kind"] for t in c["trials"]]
    assert kinds.count("random") >= 5 and "rescaled" in kinds and c["rescaled_trial"] == "kept"
    orders = {t["order"] for t in c["trials"]}
    assert orders == {"reference-first", "candidate-first"}
    assert len({t["seed"] for t in c["trials"] if t["kind"] == "random"}) >= 5
    assert all(t["runs"] == 2 for t in c["trials"])
    assert c["recheck"]["passed"]
    assert r["timing"]["reps"] >= 30 and len(r["timing"]["samples_ms"]) == r["timing"]["reps"]


def test_wrong_epilogue_constant_is_a_mismatch(affine):
    r = evaluate(affine, AFFINE_DESC, lambda t, s: t[3].copy_(t[0] * t[1] + t[2] + 1e-3))
    assert r["verdict"] == "mismatch"
    assert "outside" in r["error"] and r["timing"] is None
    assert r["correctness"]["max_abs"] == pytest.approx(1e-3, rel=1e-2)
    assert len(r["correctness"]["worst_index"]) == 2


def test_unwritten_tile_is_caught_by_nan_poisoning(affine):
    def partial(t, s):
        x, wt, b, y = t
        y[16:].copy_((x * wt + b)[16:])  # rows 0..15 never written
    r = evaluate(affine, AFFINE_DESC, partial)
    assert r["verdict"] == "mismatch"
    assert "NaN" in r["error"]
    assert r["correctness"]["worst_index"][0] < 16


def test_result_reuse_from_an_old_buffer_is_caught(affine):
    # A kernel that writes its output once and then only returns (stale memory reuse).
    state = {"n": 0}

    def lazy(t, s):
        state["n"] += 1
        if state["n"] == 1:
            correct_affine(t, s)
    r = evaluate(affine, AFFINE_DESC, lazy)
    assert r["verdict"] == "mismatch"


def test_nondeterministic_kernel_fails_the_second_run(affine):
    state = {"n": 0}

    def flaky(t, s):
        state["n"] += 1
        correct_affine(t, s)
        if state["n"] % 2 == 0:
            t[3][3, 5] += 0.5
    r = evaluate(affine, AFFINE_DESC, flaky)
    assert r["verdict"] == "mismatch"
    assert not r["correctness"]["deterministic"] or "second run" in r["error"] or "first run" in r["error"]


def test_kernel_that_drifts_after_timing_fails_the_recheck(affine):
    state = {"n": 0}

    def drift(t, s):
        state["n"] += 1
        correct_affine(t, s)
        if state["n"] > 40:  # passes every trial, then goes wrong during the timing loop
            t[3].mul_(2)
    r = evaluate(affine, AFFINE_DESC, drift)
    assert r["verdict"] == "mismatch" and r["phase"] == "recheck"
    assert "after timing" in r["error"]


def test_kernel_modifying_its_input_does_not_fool_the_reference(affine):
    def vandal(t, s):
        t[0].zero_()
        t[3].copy_(t[2].expand_as(t[3]))  # x := 0 then y = b, which equals ref only on zero inputs
    r = evaluate(affine, AFFINE_DESC, vandal)
    assert r["verdict"] == "mismatch"


def test_zero_output_on_softmax_is_a_mismatch(tmp_path):
    w = Worker("cpu")
    w.load(write(tmp_path, "softmax16.py", SOFTMAX.replace("COLS", "16")))
    r = evaluate(w, softmax_desc(16), lambda t, s: t[1].zero_())
    assert r["verdict"] == "mismatch" and not r["correctness"]["degenerate"]
    r = evaluate(w, softmax_desc(16), lambda t, s: t[1].copy_(torch.softmax(t[0], 1)))
    assert r["verdict"] == "ok", r["error"]


def test_degenerate_problem_is_flagged(tmp_path):
    w = Worker("cpu")
    w.load(write(tmp_path, "softmax_wide.py", SOFTMAX.replace("COLS", "50000")))
    r = evaluate(w, softmax_desc(50000), lambda t, s: t[1].zero_(), rescaled=False, min_reps=30)
    # zeros pass the tolerance here, which is exactly why the problem must be flagged
    assert r["verdict"] == "ok"
    assert r["correctness"]["degenerate"]
    assert "atol" in r["correctness"]["degenerate_reason"]


def degenerate(refs_by_trial):
    watch = correctness.DegenerateWatch("default")
    for refs in refs_by_trial:
        watch.add(refs)
    return watch.verdict()


def test_output_independent_of_inputs_is_degenerate():
    refs = [[torch.full((4, 4), 3.0)], [torch.full((4, 4), 3.0)]]
    deg, why = degenerate(refs)
    assert deg and "same" in why
    refs = [[torch.full((4, 4), 3.0)], [torch.full((4, 4), 4.0)]]
    assert not degenerate(refs)[0]


def test_binding_errors_name_the_tensor(affine):
    desc = json.loads(json.dumps(AFFINE_DESC))
    desc["tensors"][2]["binding"] = "lin.bais"
    r = evaluate(affine, desc, correct_affine)
    assert r["verdict"] == "mismatch" and r["phase"] == "bind"
    assert "lin.bais" in r["error"] and "lin.bias" in r["error"]
    desc = json.loads(json.dumps(AFFINE_DESC))
    desc["tensors"][0]["shape"] = [64, 33]
    r = evaluate(affine, desc, correct_affine)
    assert r["verdict"] == "mismatch" and "shape" in r["error"] and "2112 elements" in r["error"]


def test_a_declared_view_of_the_same_element_count_binds(affine):
    # The lowering declares flattened views ([64, 32] as [2048], a [32] bias as [32, 1]).
    desc = json.loads(json.dumps(AFFINE_DESC))
    desc["tensors"][0]["shape"] = [2048]
    desc["tensors"][2]["shape"] = [32, 1]
    seen = {}

    def run(t, s):
        seen["x"], seen["b"] = tuple(t[0].shape), tuple(t[2].shape)
        return correct_affine([t[0].view(64, 32), t[1], t[2].view(32), t[3]], s)
    r = evaluate(affine, desc, run)
    assert seen == {"x": (2048,), "b": (32, 1)}
    assert r["verdict"] == "ok", r["error"]


def test_kernel_error_code_is_a_launch_error(affine):
    r = evaluate(affine, AFFINE_DESC, lambda t, s: 4)
    assert r["verdict"] == "launch_error" and "returned 4" in r["error"]


def test_params_are_copies_so_a_kernel_cannot_change_the_reference(affine):
    def clobber(t, s):
        t[1].zero_()
        t[2].zero_()
        t[3].zero_()
    evaluate(affine, AFFINE_DESC, clobber)
    assert float(affine.model.w.detach().abs().sum()) > 0


def test_profiles_and_tolerance():
    assert correctness.tolerance("default", torch.float32) == (1e-4, 1e-4)
    assert correctness.tolerance("default", torch.bfloat16) == (1e-2, 1e-2)
    assert correctness.tolerance("kb-v01", torch.float32) == (1e-2, 1e-2)
    assert correctness.tolerance("default", torch.int64) == (0.0, 0.0)
    with pytest.raises(ValueError):
        correctness.tolerance("loose", torch.float32)


def test_compare_nan_never_passes_and_reports_worst():
    ref = torch.zeros(3, 4)
    out = ref.clone()
    out[1, 2] = float("nan")
    c = correctness.compare(out, ref, 1.0, 1.0)
    assert not c.passed and c.n_nan == 1 and c.worst_index == [1, 2]
    out = ref.clone()
    out[2, 3] = 1e-4 + 1e-6
    c = correctness.compare(out, ref, 1e-4, 1e-4)
    assert not c.passed and c.worst_index == [2, 3]
    assert correctness.compare(ref + 5e-5, ref, 1e-4, 1e-4).passed
    big = torch.full((2,), 1000.0)
    assert correctness.compare(big + 0.05, big, 1e-4, 1e-4).passed  # within rtol·|ref|
    assert not correctness.compare(big + 0.2, big, 1e-4, 1e-4).passed
    # a NaN in the reference passes only against NaN
    r = torch.tensor([float("nan"), 1.0])
    assert correctness.compare(r.clone(), r, 1e-4, 1e-4).passed
    assert not correctness.compare(torch.tensor([0.0, 1.0]), r, 1e-4, 1e-4).passed


def test_rescaled_trial_skipped_when_reference_not_finite(tmp_path):
    src = AFFINE.replace("return x * self.w + self.lin.bias", "return torch.log(x) * self.w + self.lin.bias")
    w = Worker("cpu")
    w.load(write(tmp_path, "logp.py", src))
    r = evaluate(w, AFFINE_DESC, lambda t, s: t[3].copy_(torch.log(t[0]) * t[1] + t[2]))
    assert r["verdict"] == "ok", r["error"]
    assert r["correctness"]["rescaled_trial"].startswith("skipped: reference not finite")


def test_timing_statistics():
    st = timing.summarize([float(i) for i in range(1, 101)], 5, "x")
    assert st.median_ms == pytest.approx(50.5) and st.p20_ms == pytest.approx(20.8)
    assert st.p80_ms == pytest.approx(80.2) and st.mean_ms == pytest.approx(50.5)
    assert st.reps == 100 and st.min_ms == 1 and st.max_ms == 100
    assert timing.choose_reps(1.0) == 30
    # the host cross-check: about 50 ms of work, 5 to 100 repetitions, no more than the timed loop's
    assert timing.host_check_reps(30, 20.0) == 5      # a 20 ms kernel: 5, not 30
    assert timing.host_check_reps(125, 2.0) == 25
    assert timing.host_check_reps(1000, 0.01) == 100
    assert timing.host_check_reps(30, 0.5) == 30      # never more than the timed loop
    assert timing.host_check_reps(30, float("nan")) == 30
    # warm-up: 5 calls, or fewer (at least one) once they took 50 ms
    assert not timing.warmup_done(0, 1.0)
    assert timing.warmup_done(1, 0.06) and not timing.warmup_done(1, 0.01)
    assert timing.warmup_done(5, 0.0) and not timing.warmup_done(4, 0.049)
    assert timing.choose_reps(1e-6) == timing.MAX_REPS
    assert 30 < timing.choose_reps(1e-3) < timing.MAX_REPS


def test_timing_suspect_flag():
    st = timing.summarize([0.01] * 30, 5, "x")
    st.host_ms_per_rep, st.sync_ms = 5.0, 0.01
    timing.judge_suspect(st)
    assert st.timing_suspect and "outside the timed stream" in st.suspect_reason
    st = timing.summarize([4.0] * 30, 5, "x")
    st.host_ms_per_rep, st.sync_ms = 4.1, 0.01
    timing.judge_suspect(st)
    assert not st.timing_suspect


def test_mismatch_is_diagnosed_against_float64(affine):
    # The kernel is 1e-3 off everywhere; the fp32 reference is exact to rounding: the message
    # says the candidate, not the reference, carries the error (the verdict stays mismatch).
    r = evaluate(affine, AFFINE_DESC, lambda t, s: t[3].copy_(t[0] * t[1] + t[2] + 1e-3))
    assert r["verdict"] == "mismatch"
    msg = r["error"]
    assert "against a float64 evaluation of the reference: candidate max error 0.001" in msg, msg
    own = float(msg.split("the reference's own max error ")[1].split(";")[0])
    assert own < 1e-5
    assert "0 of the" in msg
    assert "reference-limited" not in msg
    assert r["correctness"]["reference_limited"] is False


def test_fp64_diagnosis_names_an_inaccurate_reference():
    # A reference that is itself 1e-3 off (as a long fp32 sum can be) while the candidate is exact.
    x = torch.linspace(-1, 1, 101, dtype=torch.float32)
    exact = lambda ins: [ins[0] * 2]  # noqa: E731
    sloppy_ref = [x * 2 + 1e-3]
    cand = [x * 2]
    msg, limited = correctness.fp64_diagnosis(exact, [x], cand, sloppy_ref, 0, "default")
    assert "candidate max error 0" in msg and "reference's own max error 0.001" in msg, msg
    assert "101 of the 101 failing elements are within tolerance of float64" in msg, msg
    assert limited and "reference-limited" in msg, msg
    # A candidate that is itself off somewhere is never reference-limited, however bad the reference.
    cand_off = [x * 2 + torch.where(x > 0.9, 1e-2, 0.0)]
    msg2, limited2 = correctness.fp64_diagnosis(exact, [x], cand_off, sloppy_ref, 0, "default")
    assert not limited2 and "reference-limited" not in msg2, msg2


def test_a_small_problem_is_kept_when_the_worker_moves_on(tmp_path, monkeypatch):
    """A, B, A: the second load of A takes back A's model and memory plan without building it (a
    suite's scheduler alternates among problems); it still evaluates as before, and an edited file
    or another seed is a new problem."""
    from ucutlass_torch import worker as worker_mod
    builds = []
    real_build = worker_mod.build_model

    def counting_build(loaded, seed, device):
        builds.append(loaded.path)
        return real_build(loaded, seed=seed, device=device)

    monkeypatch.setattr(worker_mod, "build_model", counting_build)
    w = Worker("cpu")
    a = write(tmp_path, "affine.py", AFFINE)
    b = write(tmp_path, "softmax.py", SOFTMAX.replace("COLS", "16"))
    assert "kept" not in w.load(a)
    model_a = w.model
    w.load(b)
    assert w.model is not model_a
    info = w.load(a)
    assert w.model is model_a and builds == [a, b]
    assert info["name"] == w.problem_info["name"] and info["kept"] and w.kept_hits == 1
    assert "kept" not in w.problem_info
    assert evaluate(w, AFFINE_DESC, correct_affine)["verdict"] == "ok"
    w.load(a)  # the loaded problem again: nothing built
    assert builds == [a, b] and w.kept_hits == 2
    w.load(a, seed=7)  # another seed: another model
    assert builds == [a, b, a] and w.model is not model_a
    os.utime(b, ns=(1, 1))  # B's file changed: built again
    w.load(b)
    assert builds == [a, b, a, b]


def test_a_large_problem_is_not_kept(tmp_path, monkeypatch):
    from ucutlass_torch import worker as worker_mod
    monkeypatch.setattr(worker_mod, "KEEP_ONE_BYTES", 64)  # the affine model holds 256 bytes
    w = Worker("cpu")
    a = write(tmp_path, "affine.py", AFFINE)
    sm = write(tmp_path, "softmax.py", SOFTMAX.replace("COLS", "16"))
    w.load(a)
    w.load(sm)
    assert not w.kept and w.key is not None  # the affine (large) was not kept
    w.load(a)
    # the softmax (no parameters) was kept, and stays kept across the large problem's load: its
    # memory plan fits beside it
    assert w.kept_hits == 0 and len(w.kept) == 1
    w.load(sm)
    assert w.kept_hits == 1


def test_kept_problems_are_dropped_when_a_plan_does_not_fit_beside_them(tmp_path, monkeypatch):
    from ucutlass_torch import worker as worker_mod
    w = Worker("cpu")
    a = write(tmp_path, "affine.py", AFFINE)
    sm = write(tmp_path, "softmax.py", SOFTMAX.replace("COLS", "16"))
    w.load(sm)
    real_plan = w._plan
    plans = []

    def crowded(m):  # no room while anything is kept
        p = real_plan(m)
        plans.append(bool(w.kept))
        if w.kept:
            p.fits = False
        return p

    monkeypatch.setattr(w, "_plan", crowded)
    w.load(a)
    assert plans == [True, False]  # planned beside the kept softmax, then alone
    assert not w.kept and w.memory.fits
