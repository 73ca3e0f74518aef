"""Where an evaluation's time goes (correctness.PhaseClock, the worker's "seconds" by phase), and
checks that read the device once instead of once per piece (docs/eval-contract.md, "Memory"), on
CPU with Python stand-in kernels."""

import json
import os
import subprocess
import sys
import time

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import correctness, kernel  # noqa: E402
from ucutlass_torch.worker import Worker  # noqa: E402

# The guard tests' ReLU problem, its library's description and its CPU worker (a fixture).
from test_eval_guards_cpu import DESC, relu  # noqa: E402,F401

PHASES = {"bind", "inputs", "reference", "candidate", "guards", "checks", "timing", "recheck"}


def test_a_phase_counts_its_own_time_not_the_phases_nested_in_it():
    syncs = []
    clock = correctness.PhaseClock(lambda: syncs.append(1))
    with clock.phase("outer"):
        time.sleep(0.02)
        with clock.phase("inner"):
            time.sleep(0.05)
        with clock.phase("outer"):  # the same name nested: still counted once per second spent
            time.sleep(0.01)
    s = clock.seconds
    assert s["inner"] >= 0.05
    assert 0.03 <= s["outer"] < 0.05 + 0.02, s  # 0.02 + 0.01, not the inner 0.05 again
    assert len(syncs) == 3  # every phase that ended normally synchronized


def test_a_phase_that_raises_is_counted_without_synchronizing():
    syncs = []
    clock = correctness.PhaseClock(lambda: syncs.append(1))
    with pytest.raises(RuntimeError):
        with clock.phase("candidate"):
            time.sleep(0.01)
            raise RuntimeError("an illegal memory access")
    assert clock.seconds["candidate"] >= 0.01
    assert not syncs


def test_an_evaluation_reports_its_seconds_by_phase(relu):
    calls = []

    def slow(t, s):
        calls.append(1)
        time.sleep(0.01)
        torch.clamp(t[0], min=0, out=t[1])
    r = relu.evaluate(kernel.PyKernel(DESC, slow), min_reps=30)
    assert r["verdict"] == "ok", r["error"]
    sec = r["seconds"]
    assert PHASES <= set(sec), sec
    # Six trials, two candidate runs each, at 10 ms a run: the candidate's phase holds them.
    assert sec["candidate"] >= 12 * 0.01
    # The timing loop's runs (30 or more) are the timing phase's, not the candidate's.
    assert sec["timing"] >= 30 * 0.01
    assert sum(sec[k] for k in PHASES) <= sec["total"] + 1e-6


def test_a_mismatch_reports_the_phases_it_reached(relu):
    r = relu.evaluate(kernel.PyKernel(DESC, lambda t, s: t[1].fill_(1.0)), min_reps=30)
    assert r["verdict"] == "mismatch"
    assert {"bind", "inputs", "reference", "candidate", "checks"} <= set(r["seconds"])
    assert "timing" not in r["seconds"]


class HostReads:
    """Counts the reads of a tensor's value into Python (each one a device synchronization on a GPU)."""

    def __init__(self, monkeypatch):
        self.n = 0
        for name in ("item", "tolist", "__bool__", "__int__", "__float__"):
            orig = getattr(torch.Tensor, name)

            def counted(t, *a, _orig=orig, **kw):
                self.n += 1
                return _orig(t, *a, **kw)
            monkeypatch.setattr(torch.Tensor, name, counted)


def test_a_comparison_in_many_pieces_reads_the_device_once(monkeypatch):
    torch.manual_seed(0)
    ref = torch.randn(64, 1000)
    out = ref + 1e-3 * torch.randn(64, 1000)
    out[7, 3] = float("nan")
    reads = HostReads(monkeypatch)
    c = correctness.compare(out, ref, 1e-4, 1e-4, chunk=1000)  # 64 pieces
    assert reads.n <= 2, reads.n
    assert not c.passed and c.n_nan == 1 and c.worst_index == [7, 3]


def test_fingerprints_of_many_tensors_read_the_device_once_and_equal_each_ones(monkeypatch):
    ts = [torch.randn(100), torch.arange(10, dtype=torch.int16), torch.tensor([True, False]), torch.randn(3, 4)]
    each = [correctness.fingerprint(t, 16) for t in ts]
    reads = HostReads(monkeypatch)
    together = correctness.fingerprints(ts, 16)
    assert reads.n == 1
    assert together == each
    assert correctness.fingerprints([]) == []


def test_abs_max_and_all_finite_read_the_device_once(monkeypatch):
    t = torch.randn(50, 100)
    t[10, 5] = -7.5
    reads = HostReads(monkeypatch)
    assert correctness.abs_max(t, chunk=100) == 7.5
    assert correctness.all_finite(t, chunk=100)
    assert reads.n == 2
    t[40, 1] = float("inf")
    assert not correctness.all_finite(t, chunk=100)


def test_a_workers_library_copies_leave_nothing_behind(tmp_path):
    import gc

    w = Worker("cpu")
    folder = w.tmpdir
    bad = tmp_path / "not_a_library.so"
    bad.write_bytes(b"not an ELF file")
    with pytest.raises(kernel.KernelError):
        w.open_kernel(str(bad))
    assert os.listdir(folder) == []  # the private copy is gone, loaded or not
    del w
    gc.collect()
    assert not os.path.exists(folder)


class Ops(torch.overrides.TorchFunctionMode):
    """Counts the torch operations dispatched (each a kernel launch or more on a GPU)."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.n += 1
        return func(*args, **(kwargs or {}))


def test_a_passing_comparison_takes_few_operations_and_says_the_same():
    torch.manual_seed(1)
    ref = torch.randn(64, 1000)
    out = ref + 1e-5 * torch.randn(64, 1000)
    with Ops() as ops:
        quick = correctness.compare(out, ref, 1e-4, 1e-4, chunk=1000)
    assert quick.passed
    # the full pass: about 55 operations in each of 64 pieces; the quick one: about 20 in 22
    assert ops.n < 800, ops.n
    bad = out.clone()
    bad[0, 0] = float("nan")  # not finite: the full pass, whose statistics the quick one matches
    full = correctness.compare(bad, ref, 1e-4, 1e-4, chunk=1000)
    assert not full.passed and full.n_nan == 1
    assert (quick.max_abs, quick.max_rel) == (correctness.compare(out, ref, 1e-4, 1e-4, chunk=7).max_abs,
                                              correctness.compare(out, ref, 1e-4, 1e-4, chunk=7).max_rel)


def test_a_comparison_in_many_pieces_stays_within_its_scratch():
    """Each piece's temporaries go before the next: 300 Ki elements in pieces of 4 Ki (quick pass:
    16 or 24 Ki) hold one piece's scratch, passing or failing (the full pass)."""
    from test_eval_memory_cpu import LiveBytes

    cases = []
    for ref, flat in ((torch.randn(300, 1000), True), (torch.randn(1000, 300).t(), False)):
        cases.append((ref, ref + 1e-6, flat))
        bad = ref + 1e-6
        bad[5, 5] = float("nan")
        cases.append((ref, bad, flat))
    for ref, out, flat in cases:
        with LiveBytes() as live:
            correctness.compare(out, ref, 1e-4, 1e-4, chunk=1 << 12)
        # the comparison's own share of the scratch (scratch_bytes adds the fingerprints' masks)
        assert 0 < live.peak <= (1 << 12) * correctness.SCRATCH_PER_ELEMENT, (flat, live.peak)


def test_the_bench_script_itemizes_a_problems_evaluation_on_the_cpu(tmp_path):
    # bench/harness/eval_phases.py: the problem's own model stands in for the kernel, so the
    # verdict is ok and every phase the protocol reaches is itemized; a broken stand-in (outputs
    # not written) would be a mismatch.
    problem = tmp_path / "tiny_relu.py"
    problem.write_text("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                       "    def forward(self, x):\n        return torch.relu(x)\n\n\n"
                       "def get_inputs():\n    return [torch.randn(64, 256)]\n\n\n"
                       "def get_init_inputs():\n    return []\n")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "harness", "eval_phases.py")
    out = subprocess.run([sys.executable, script, str(problem), "--repeat", "1"], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 1 and rows[0]["verdict"] == "ok", rows
    assert {"reference", "candidate", "checks", "timing", "total"} <= set(rows[0]["seconds"]), rows[0]
    assert rows[0]["fused_checks"] is False  # no GPU: the checks are PyTorch operations
