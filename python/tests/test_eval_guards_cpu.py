"""Outputs overwritten before every timed repetition, guard zones around the candidate's buffers,
and a reference no candidate can reach (docs/eval-contract.md §1-§2, issue 36 item 13), on CPU
with Python stand-in kernels (kernel.PyKernel). The same hostile kernels in CUDA run in
test_hostile_gpu.py."""

import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import correctness, guard, kernel, timing  # noqa: E402
from ucutlass_torch.worker import Worker  # noqa: E402

RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("scale", torch.ones(1))

    def forward(self, x):
        return torch.relu(x) * self.scale

def get_inputs():
    return [torch.randn(64, 256)]

def get_init_inputs():
    return []
'''

DESC = {"abi": 1, "name": "relu", "tensors": [
    {"name": "x", "role": "in", "dtype": "f32", "shape": [64, 256], "index": 0},
    {"name": "y", "role": "out", "dtype": "f32", "shape": [64, 256], "index": 0}]}
N = 64 * 256


@pytest.fixture
def relu(tmp_path, monkeypatch):
    monkeypatch.setattr(guard, "GUARD_BYTES", 64 * 1024)
    p = tmp_path / "relu.py"
    p.write_text(textwrap.dedent(RELU))
    w = Worker("cpu")
    w.load(str(p))
    return w


def correct(t, s):
    torch.clamp(t[0], min=0, out=t[1])


def beyond(y: torch.Tensor, start: int, n: int) -> torch.Tensor:
    """Elements of y's storage from ``start`` (relative to y's first element) on: memory past or
    before the tensor, as a kernel with a bad index reaches it."""
    return torch.as_strided(y, (n,), (1,), y.storage_offset() + start)


def evaluate(w, fn, **kw):
    kw.setdefault("min_reps", 30)
    return w.evaluate(kernel.PyKernel(DESC, fn), **kw)


# -- outputs overwritten before every timed repetition -------------------------------------------

def test_every_run_timed_or_not_starts_from_nan_outputs(relu):
    seen = []

    def watch(t, s):
        seen.append(bool(torch.isnan(t[1]).all()))
        correct(t, s)
    r = evaluate(relu, watch)
    assert r["verdict"] == "ok", r["error"]
    assert len(seen) > 12 + 30 and all(seen), seen.count(False)


def test_half_the_work_when_the_output_is_already_written_is_timed_on_the_whole_work(relu):
    # Reads its output first: where it holds the previous call's result, skips half the rows.
    # Before the overwrite the timing loop timed half the work and every check passed.
    skipped = []

    def lazy(t, s):
        if not torch.isnan(t[1][32:]).any():
            skipped.append(1)
            torch.clamp(t[0][:32], min=0, out=t[1][:32])
            return
        correct(t, s)
    r = evaluate(relu, lazy)
    assert r["verdict"] == "ok", r["error"]
    assert skipped == []


def test_half_the_work_after_twelve_calls_fails_the_check_after_timing(relu):
    calls = []

    def tired(t, s):
        calls.append(1)
        rows = 64 if len(calls) <= 12 else 32
        torch.clamp(t[0][:rows], min=0, out=t[1][:rows])
    r = evaluate(relu, tired)
    assert r["verdict"] == "mismatch" and r["phase"] == "recheck", r["error"]
    assert "after timing" in r["error"] and "NaN" in r["error"]


def test_the_timing_loop_prepares_before_every_call():
    log = []
    timing.time_cpu(lambda: log.append("run"), min_reps=30, prepare=lambda: log.append("prepare"))
    assert log[0] == "prepare" and len(log) % 2 == 0
    assert log == ["prepare", "run"] * (len(log) // 2)


# -- guard zones ---------------------------------------------------------------------------------

def test_a_write_past_the_output_is_rejected_and_the_worker_goes_on(relu):
    def overrun(t, s):
        correct(t, s)
        beyond(t[1], N, 1024).fill_(0.0)  # 4 KiB past its end
    r = evaluate(relu, overrun)
    assert r["verdict"] == "rejected" and r["phase"] == "correctness", r
    assert r["error"].startswith("rejected: wrote outside its outputs: 4096 byte(s)")
    assert "after output 0 'y' (the first 0 bytes past its end, the last 4095)" in r["error"]
    assert evaluate(relu, correct)["verdict"] == "ok"


def test_a_write_before_the_output_is_rejected(relu):
    def underrun(t, s):
        correct(t, s)
        beyond(t[1], -16, 4).fill_(1.0)
    r = evaluate(relu, underrun)
    assert r["verdict"] == "rejected" and "before output 0 'y' (the farthest 64 bytes before its start)" in r["error"]


class WorkspaceKernel(kernel.PyKernel):
    """A stand-in kernel that is handed its workspace too: ``fn(tensors, workspace)``."""

    def launch(self, tensors, scalars, workspace, stream):
        self.fn(list(tensors), workspace)


def test_a_write_past_the_workspace_is_rejected_inside_it_is_not(relu):
    def uses(extra):
        def fn(t, ws):
            correct(t, [])
            ws.fill_(7)  # the workspace is the kernel's to write
            if extra:
                beyond(ws, ws.numel(), extra).fill_(7)
        return fn
    assert relu.evaluate(WorkspaceKernel(DESC, uses(0), workspace_bytes=1000), min_reps=30)["verdict"] == "ok"
    r = relu.evaluate(WorkspaceKernel(DESC, uses(8), workspace_bytes=1000), do_timing=False)
    assert r["verdict"] == "rejected" and "after the workspace (the first 0 bytes past its end" in r["error"], r["error"]


def test_a_write_in_the_timing_loop_is_rejected_after_it(relu):
    calls = []

    def late(t, s):
        calls.append(1)
        correct(t, s)
        if len(calls) == 20:
            beyond(t[1], N + 100, 1).fill_(3.0)
    r = evaluate(relu, late)
    assert r["verdict"] == "rejected" and r["phase"] == "timing", r["error"]


def test_the_arena_lays_out_aligned_buffers_between_zones():
    a = guard.Arena(torch.device("cpu"), [("output 0 'y'", torch.float16, [3, 5]), ("output 1 'z'", torch.int64, [2])],
                    workspace_bytes=100, guard_bytes=1000)
    y, z = a.outputs
    assert y.shape == (3, 5) and y.dtype == torch.float16 and z.shape == (2,) and a.workspace.numel() == 100
    g = guard.ALIGN * 2  # 1000 rounded up
    assert [s.offset for s in a.slots] == [g, 2 * g + guard.ALIGN, 3 * g + 2 * guard.ALIGN]
    assert all(s.offset % guard.ALIGN == 0 for s in a.slots)
    y.fill_(1)
    z.fill_(-1)
    a.workspace.fill_(0)
    a.check()  # writing every buffer whole touches no zone
    a.raw[a.slots[0].offset + 30] = 0  # the padding after y's 30 bytes is guard zone too
    with pytest.raises(guard.OutOfBounds, match="after output 0 'y' \\(the first 0 bytes past its end"):
        a.check()
    a.restore()
    a.check()


# -- the reference out of the candidate's reach ----------------------------------------------------

def test_a_write_into_the_reference_model_is_rejected_and_the_model_rebuilt(relu):
    def stray(t, s):
        correct(t, s)
        relu.model.scale.add_(1.0)  # as a write far past its output into the model's buffer would
    before = relu.model.scale.clone()
    r = evaluate(relu, stray)
    assert r["verdict"] == "rejected" and "the reference model's scale changed" in r["error"], r["error"]
    assert torch.equal(relu.model.scale, before)
    assert evaluate(relu, correct)["verdict"] == "ok"


def test_a_write_into_the_trials_inputs_is_rejected():
    made = []

    def make_inputs(seed):
        torch.manual_seed(seed)
        made.append(torch.randn(8, 8))
        return [made[-1]]

    def candidate(inputs):
        made[-1].zero_()  # the trial's own inputs, which the reference reads when the candidate runs first
        return [torch.relu(inputs[0])]
    with pytest.raises(guard.OutOfBounds, match="the trial's input 0 changed while the candidate ran"):
        correctness.check(lambda ins: torch.relu(ins[0]), candidate, make_inputs)


def test_a_candidate_cannot_damage_the_reference_outputs_it_is_compared_with():
    # The H200 case: a kernel writing past its output hit the reference's output buffer. Here the
    # candidate computes garbage and overwrites the reference's output with the same garbage; the
    # reference's outputs were moved (ref_home) before the candidate ran, so the check still fails,
    # and the float64 pass cannot be fooled by a reference made to look inaccurate either.
    last_ref = []

    def reference(ins):
        last_ref[:] = [torch.relu(ins[0])]
        return last_ref[0]

    def vandal(ins):
        out = torch.full_like(ins[0], 0.5)
        if last_ref:
            last_ref[0].fill_(0.5)
        return [out]
    make = lambda seed: [torch.randn(8, 8, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    exact = lambda ins: torch.relu(ins[0])  # noqa: E731
    report = correctness.check(reference, vandal, make, ref_home="cpu", reference64=exact)
    assert not report.passed and report.passed_by == ""
    assert "no reference-class pass" in report.message
    assert not report.trials[0].passed
    # Left where it was made, the damaged reference agrees with the garbage (trial 0 runs the
    # reference first): why it moves.
    assert correctness.check(reference, vandal, make, ref_home=None, reference64=exact).trials[0].passed


def test_made_after_the_candidate_no_reference_output_exists_while_it_runs():
    # ref_home="after" (the worker's choice for large outputs): the reference's outputs of a
    # reference-first trial are dropped before the candidate runs and made again after it; the
    # second run, when its bits repeat the first's, reuses the verdict without a reference at all.
    import weakref
    live = []
    calls = {"reference": 0, "candidate": 0}

    def reference(ins):
        calls["reference"] += 1
        out = torch.relu(ins[0])
        live.append(weakref.ref(out))
        return out

    def candidate(ins):
        calls["candidate"] += 1
        assert all(w() is None for w in live), "a reference output was alive while the candidate ran"
        return [torch.relu(ins[0])]
    make = lambda seed: [torch.randn(8, 8, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    report = correctness.check(reference, candidate, make, ref_home="after", trials=5)
    assert report.passed and report.passed_by == "allclose" and not report.degenerate
    # 5 random trials and the rescaled one: reference-first trials (0, 2, 4) run the reference
    # twice, candidate-first ones (1, 3, 5) once; every trial runs the candidate twice.
    assert calls == {"reference": 9, "candidate": 12}


def test_made_after_the_candidate_a_vandal_still_fails():
    last_ref = []

    def reference(ins):
        last_ref[:] = [torch.relu(ins[0])]
        return last_ref[0]

    def vandal(ins):
        if last_ref:
            last_ref[0].fill_(0.5)
        return [torch.full_like(ins[0], 0.5)]
    make = lambda seed: [torch.randn(8, 8, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    report = correctness.check(reference, vandal, make, ref_home="after", reference64=lambda ins: torch.relu(ins[0]))
    assert not report.passed and not report.trials[0].passed and report.passed_by == ""


def test_made_after_the_candidate_a_second_run_with_other_bits_is_judged_against_a_fresh_reference():
    runs = []

    def reference(ins):
        return torch.relu(ins[0])

    def flaky(ins):
        runs.append(1)
        out = torch.relu(ins[0])
        return [out if len(runs) % 2 else out + 1.0]  # every second run is wrong
    make = lambda seed: [torch.randn(8, 8, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    report = correctness.check(reference, flaky, make, ref_home="after")
    assert not report.passed and not report.deterministic
    assert "second run" in report.message and "not deterministic" in report.message


def test_made_after_the_candidate_the_degenerate_test_still_sees_a_constant_problem():
    make = lambda seed: [torch.randn(64, 64, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    const = lambda ins: torch.ones_like(ins[0])  # noqa: E731
    report = correctness.check(const, lambda ins: [torch.ones_like(ins[0])], make, ref_home="after")
    assert report.degenerate and "same (within tolerance) for every input seed" in report.degenerate_reason
    varied = correctness.check(lambda ins: ins[0] * 2, lambda ins: [ins[0] * 2], make, ref_home="after")
    assert not varied.degenerate
