"""The contract's reference-class pass (EVAL-CONTRACT §1; docs/eval-contract.md §1, issue 36 item
14) on CPU: under the default profile a run that fails the elementwise check still passes when, for
every output, the candidate is no further from the model evaluated in float64 than the fp32
reference is; kb-v01 stays plain elementwise; NaN/inf rules are unchanged; a wrong candidate still
fails."""

import math
import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import correctness, float64, kernel  # noqa: E402
from ucutlass_torch.worker import Worker  # noqa: E402

# cumsum over rows of 16384 in fp32 as a GPU computes it: in blocks of 64, the block totals added
# in fp32 one after another. Its rounding error (~1e-3 on a random walk of randn * 10) is above
# the default tolerance where the sum crosses zero: a candidate summing in float64 and rounding
# once fails the elementwise check there, and is the more accurate of the two.
CUMSUM = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        r, n = x.shape
        c = x.view(r, n // 64, 64).cumsum(-1)
        totals = c[..., -1]
        offsets = torch.zeros_like(totals)
        acc = torch.zeros_like(totals[:, 0])
        for b in range(n // 64):
            offsets[:, b] = acc
            acc = acc + totals[:, b]
        return (c + offsets.unsqueeze(-1)).view(r, n)

def get_inputs():
    return [torch.randn(64, 16384) * 10]

def get_init_inputs():
    return []
'''

DESC = {"abi": 1, "name": "cumsum", "tensors": [
    {"name": "x", "role": "in", "dtype": "f32", "shape": [64, 16384], "index": 0},
    {"name": "y", "role": "out", "dtype": "f32", "shape": [64, 16384], "index": 0}]}


def in_float64(t, s):
    t[1].copy_(torch.cumsum(t[0].double(), 1))


@pytest.fixture(scope="module")
def cumsum(tmp_path_factory):
    p = tmp_path_factory.mktemp("f64") / "cumsum.py"
    p.write_text(textwrap.dedent(CUMSUM))
    w = Worker("cpu")
    w.load(str(p))
    return w


def test_a_candidate_more_accurate_than_the_reference_passes_by_float64(cumsum):
    r = cumsum.evaluate(kernel.PyKernel(DESC, in_float64), min_reps=30)
    assert r["verdict"] == "ok", r["error"]
    c = r["correctness"]
    assert c["passed_by"] == "float64"
    # Elementwise it fails (what the contract's reference says) in most trials: every trial passes
    # one way or the other, the rescaled one included.
    by = [t["passed_by"] for t in c["trials"]]
    assert set(by) == {"float64", "allclose"} and by.count("float64") >= 3 and c["rescaled_trial"] == "kept"
    for t in c["trials"]:
        if t["passed_by"] == "float64":
            [e] = t["float64"]
            assert e["passed"] and e["candidate_err"] <= e["reference_err"], t
    assert c["recheck"]["passed"] and c["recheck"]["passed_by"] == "float64"


def test_kb_v01_stays_plain_elementwise():
    assert correctness.float64_pass("default") and not correctness.float64_pass("kb-v01")
    x = torch.linspace(-1, 1, 101)
    exact = lambda ins: ins[0] * 2  # noqa: E731
    sloppy = [x * 2 + 0.05]  # the fp32 "reference" 0.05 off, beyond kb-v01's 1e-2
    cand = [x * 2]
    assert correctness.judge(cand, sloppy, [x], "default", exact).passed_by == "float64"
    j = correctness.judge(cand, sloppy, [x], "kb-v01", exact)
    assert not j.passed and j.passed_by == "" and "reference-limited" in j.note and "reference-class" not in j.note


def test_a_wrong_candidate_still_fails(cumsum):
    # bf16 rounding: 4e-3 relative, far beyond the reference's own error.
    def bf16(t, s):
        t[1].copy_(torch.cumsum(t[0].double(), 1).to(torch.bfloat16))
    r = cumsum.evaluate(kernel.PyKernel(DESC, bf16), do_timing=False)
    assert r["verdict"] == "mismatch" and r["correctness"]["passed_by"] == ""
    assert "no reference-class pass: output 0: candidate max error" in r["error"]
    [e] = r["correctness"]["trials"][0]["float64"]
    assert not e["passed"] and e["candidate_err"] > e["reference_err"]


def test_a_reference_that_does_not_round_gives_no_room():
    # ReLU: the fp32 reference is exact, so its own error is 0 and only an exact candidate passes.
    x = torch.randn(1000)
    exact = lambda ins: torch.relu(ins[0])  # noqa: E731
    ref = [torch.relu(x)]
    off = [torch.relu(x) + 1e-3]
    j = correctness.judge(off, ref, [x], "default", exact)
    assert not j.passed and j.float64[0]["reference_err"] == 0.0
    assert "candidate max error 0.001 against float64, above the fp32 reference's own 0" in j.note


def test_nan_rules_are_unchanged():
    x = torch.linspace(-1, 1, 101)
    exact = lambda ins: ins[0] * 2  # noqa: E731
    sloppy = x * 2 + 0.05
    cand = x * 2
    cand[7] = math.nan  # never written: fails though the rest is closer to float64
    j = correctness.judge([cand], [sloppy], [x], "default", exact)
    assert not j.passed and j.float64[0]["candidate_err"] is not None and not j.float64[0]["passed"]
    # Where the reference is not finite the candidate must match it exactly.
    ref = sloppy.clone()
    ref[3] = math.inf
    exact_inf = lambda ins: torch.where(torch.arange(101) == 3, math.inf, ins[0] * 2)  # noqa: E731
    good = (x * 2).clone()
    good[3] = math.inf
    assert correctness.judge([good], [ref], [x], "default", exact_inf).passed_by == "float64"
    bad = (x * 2).clone()
    bad[3] = 1e30
    j = correctness.judge([bad], [ref], [x], "default", exact_inf)
    assert not j.passed and "1 element(s) break the NaN/inf rules" in j.note


def test_every_output_must_pass_and_integer_outputs_compare_exactly():
    x = torch.linspace(-1, 1, 101)
    exact = lambda ins: (ins[0] * 2, ins[0] * 3, (ins[0] > 0).long())  # noqa: E731
    refs = [x * 2 + 0.05, x * 3, (x > 0).long()]
    # output 0 passes by float64, output 1 is worse than the (exact) reference's own error
    j = correctness.judge([x * 2, x * 3 + 1e-3, (x > 0).long()], refs, [x], "default", exact)
    assert not j.passed and "output 1:" in j.note
    assert correctness.judge([x * 2, x * 3, (x > 0).long()], refs, [x], "default", exact).passed_by == "float64"
    j = correctness.judge([x * 2, x * 3, (x > 0.5).long()], refs, [x], "default", exact)
    assert not j.passed and "output 2 is int64 (compared exactly)" in j.note


def test_a_float64_evaluation_that_cannot_run_passes_nothing():
    x = torch.linspace(-1, 1, 11)

    def no_room(ins):
        raise MemoryError("the float64 model and forward need about 9 GiB, 1 GiB is free")
    j = correctness.judge([x * 2], [x * 2 + 0.05], [x], "default", no_room)
    assert not j.passed and "(no float64 pass or diagnosis: MemoryError" in j.note


def test_the_reference_class_errors_in_chunks_equal_one_pass():
    g = torch.Generator().manual_seed(5)
    a = torch.randn(37, 11, generator=g, dtype=torch.float64)
    r = (a + torch.randn(37, 11, generator=g, dtype=torch.float64) * 1e-3).float()
    o = (a + torch.randn(37, 11, generator=g, dtype=torch.float64) * 1e-4).float()
    whole = float64.reference_class([o], [r], [a], [False], "default")
    for chunk in (1, 5, 13):
        assert float64.reference_class([o], [r], [a], [False], "default", chunk) == whole
    assert whole[0] and whole[1][0]["candidate_err"] == pytest.approx(float((o.double() - a).abs().max()))


def test_after_a_failed_trial_no_more_float64_runs():
    # The verdict is decided by the first failed trial: later ones are judged elementwise only.
    calls = []

    def exact(ins):
        calls.append(1)
        return ins[0] * 2
    make = lambda seed: [torch.randn(50, generator=torch.Generator().manual_seed(seed))]  # noqa: E731
    report = correctness.check(lambda ins: ins[0] * 2, lambda ins: [ins[0] * 2 + 0.1], make, reference64=exact)
    assert not report.passed and len(report.trials) == 6 and len(calls) == 1
