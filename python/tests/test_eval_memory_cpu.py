"""The evaluator's memory plan on CPU (docs/eval-contract.md, "Memory"): the plan's arithmetic, the
chunked comparison against the whole-tensor one it replaced, the protocol's peak of live tensor
bytes (counted by a TorchDispatchMode while stand-in kernels run), memory released between
candidates and problems, and the up-front refusal of a problem that cannot fit."""

import math
import os
import sys
import textwrap
import weakref

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import correctness, guard, kernel, memplan
from ucutlass_torch.worker import Worker

GiB = 2**30
MiB = 2**20


class LiveBytes(TorchDispatchMode):
    """Counts the bytes of the tensor storages allocated while active that are still alive, and
    their peak. A storage is followed through a weak reference to its Python object, which lives
    exactly as long as the storage (PyTorch keeps the object while any tensor, parameter or view
    holds the storage). Storages made before the mode (the model's parameters) are not counted."""

    def __init__(self):
        super().__init__()
        self.storages = {}  # data_ptr -> (nbytes, weak reference to the storage)
        self.peak = 0

    def now(self) -> int:
        self.storages = {k: v for k, v in self.storages.items() if v[1]() is not None}
        return sum(v[0] for v in self.storages.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        fresh = all(r.alias_info is None for r in func._schema.returns)  # not a view, not in place
        for t in tree_leaves(out):
            if fresh and isinstance(t, torch.Tensor) and t.device.type != "meta":
                storage = t.untyped_storage()
                entry = self.storages.get(storage.data_ptr())
                if storage.nbytes() and (entry is None or entry[1]() is not storage):
                    self.storages[storage.data_ptr()] = (storage.nbytes(), weakref.ref(storage))
        self.peak = max(self.peak, self.now())
        return out


RELU = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.rand(ROWS, COLS) - 0.5]

def get_init_inputs():
    return []
'''

SCALE = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, n))

    def forward(self, x):
        return x @ self.w

def get_inputs():
    return [torch.rand(64, N)]

def get_init_inputs():
    return [N]
'''


def problem(tmp_path, name, text, **subs):
    for k, v in subs.items():
        text = text.replace(k, str(v))
    p = tmp_path / f"{name}.py"
    p.write_text(textwrap.dedent(text))
    return str(p)


def relu_desc(rows, cols):
    return {"abi": 1, "name": "relu", "tensors": [
        {"name": "x", "role": "in", "dtype": "f32", "shape": [rows, cols], "index": 0},
        {"name": "y", "role": "out", "dtype": "f32", "shape": [rows, cols], "index": 0}]}


def relu_into(t, s):
    t[1].copy_(t[0]).clamp_(min=0)


def scale_desc(n):
    return {"abi": 1, "name": "scale", "tensors": [
        {"name": "x", "role": "in", "dtype": "f32", "shape": [64, n], "index": 0},
        {"name": "w", "role": "param", "dtype": "f32", "shape": [n, n], "binding": "w"},
        {"name": "y", "role": "out", "dtype": "f32", "shape": [64, n], "index": 0}]}


# -- the plan's arithmetic ---------------------------------------------------------------------

def sizes(i, o, p, f):
    return memplan.Sizes(inputs=int(i), outputs=int(o), params=int(p), forward_peak=int(f))


def test_the_issues_6gib_elementwise_problem_fits_with_its_reference_made_after_the_candidate():
    # 4096 x 393216 fp32 in and out (issue 25): 2 x 6 inputs + 6 candidate + 6 reference (or the
    # forward run again beside the candidate's buffers) + 128 MiB flush + 384 MiB compare chunks +
    # 3 guard zones = 24.5 GiB on a GPU with 139 GiB free. 6 GiB of outputs are above
    # STASH_MAX_BYTES: not moved to the host and back in every trial, but made again ("after"), so
    # even a host with no room for them does not refuse the problem.
    u = 4096 * 393216 * 4
    assert u == 6 * GiB
    guards = memplan.guard_bytes(1)
    for host in (100 * GiB, 1 * GiB):
        p = memplan.plan(sizes(u, u, 0, u), 139 * GiB, 140 * GiB, host, 128 * MiB, 384 * MiB, guards=guards)
        assert p.fits and p.keep_on == "after" and p.message == ""
        assert p.need_bytes == 24 * GiB + 512 * MiB + guards and guards == 3 * guard.GUARD_BYTES


def test_small_reference_outputs_go_to_the_host_and_need_room_there():
    # Up to STASH_MAX_BYTES the reference's outputs move to host memory (two transfers a trial are
    # cheaper than a second forward); the host must hold them.
    u = memplan.STASH_MAX_BYTES
    p = memplan.plan(sizes(u, u, 0, u), 139 * GiB, 140 * GiB, 100 * GiB, 128 * MiB, 384 * MiB)
    assert p.fits and p.keep_on == "host"
    assert p.need_bytes == 4 * u + 512 * MiB
    short = memplan.plan(sizes(u, u, 0, u), 139 * GiB, 140 * GiB, 32 * MiB, 128 * MiB, 384 * MiB)
    assert not short.fits
    assert "reference's outputs (64 MiB), kept in host memory out of the candidate's reach" in short.message
    big = memplan.plan(sizes(u, u + 1, 0, u), 139 * GiB, 140 * GiB, 32 * MiB, 128 * MiB, 384 * MiB)
    assert big.fits and big.keep_on == "after"
    # On a CPU nothing moves: the outputs stay on the device (the host), whatever their size.
    cpu = memplan.plan(sizes(u, 4 * u, 0, u), 139 * GiB, 140 * GiB, 0, 0, 384 * MiB, where="host")
    assert cpu.fits and cpu.keep_on == "device"


@pytest.mark.parametrize("split", [(0, 1, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1), (1, 0, 0, 0), (1, 1, 1, 1),
                                   (0, 1, 0, 3), (2, 1, 1, 1), (0, 0, 1, 3)])
def test_every_problem_whose_eager_forward_fits_in_40_percent_is_planned_to_fit(split):
    # The target: eager forward (parameters + inputs + its own peak, outputs included) within 40%
    # of the GPU, whatever the split; 1 GiB of the GPU is the CUDA context.
    total = 140 * GiB
    wp, wi, wo, wf = split
    eager = 0.4 * total
    unit = eager / (wp + wi + max(wo, wf))
    p_, i, o = wp * unit, wi * unit, wo * unit
    f = max(wo, wf) * unit
    p = memplan.plan(sizes(i, o, p_, f), int(total - p_ - GiB), total, 100 * GiB, 128 * MiB, 384 * MiB)
    assert p.fits, p.message


def test_a_problem_too_large_is_refused_naming_the_sizes_and_the_fix():
    u = 40 * GiB
    p = memplan.plan(sizes(u, u, 0, u), 139 * GiB, 140 * GiB, 100 * GiB, 128 * MiB, 384 * MiB)
    assert not p.fits
    assert p.message.startswith("does not fit in GPU memory: an evaluation under the contract needs about 160.5 GiB")
    for part in ("inputs 2 x 40.0 GiB", "candidate outputs 40.0 GiB", "139.0 GiB of 140.0 GiB is free",
                 "use one with more memory", "make get_inputs() smaller"):
        assert part in p.message, p.message


# -- chunked comparison ------------------------------------------------------------------------

def whole_tensor_compare(out, ref, atol, rtol):
    """The comparison as it was before it ran in chunks (one pass, full-size temporaries): the
    oracle the chunked one must agree with."""
    if tuple(out.shape) != tuple(ref.shape) and out.numel() == ref.numel():
        out = out.reshape(ref.shape)
    wide = torch.float64 if ref.dtype == torch.float64 else torch.float32
    o, r = out.to(wide), ref.to(wide)
    ok, diff, bound, ref_finite, same_special = correctness._verdict(o, r, atol, rtol)
    n_bad = int((~ok).sum())
    n_nan = int((ref_finite & ~torch.isfinite(o)).sum())
    score = torch.where(ref_finite & ~torch.isfinite(o), torch.full_like(diff, math.inf), diff - bound)
    score = torch.where(same_special, torch.full_like(diff, -math.inf), score)
    score = torch.nan_to_num(score, nan=math.inf)
    flat = int(torch.argmax(score.reshape(-1)))
    finite_diff = torch.nan_to_num(torch.where(ref_finite, diff, torch.zeros_like(diff)), nan=math.inf,
                                   posinf=math.inf)
    max_abs = float(finite_diff.max())
    nz = ref_finite & (r != 0)
    max_rel = float((finite_diff[nz] / r.abs()[nz]).max()) if bool(nz.any()) else (0.0 if max_abs == 0 else math.inf)
    idx = list(correctness._unravel(flat, tuple(out.shape)))
    return (n_bad == 0, max_abs, max_rel, idx, o.reshape(-1)[flat].item(), r.reshape(-1)[flat].item(), n_bad, n_nan)


def fields(c):
    return tuple(repr(v) for v in (c.passed, c.max_abs, c.max_rel, c.worst_index, c.worst_out, c.worst_ref,
                                   c.n_bad, c.n_nan))


def cases():
    nan, inf = math.nan, math.inf
    g = torch.Generator().manual_seed(3)
    ref = torch.rand(6, 7, generator=g) * 4 - 2
    yield "passes", ref + 1e-5, ref
    out = ref.clone()
    out[0, 1], out[5, 6] = nan, nan  # two never-written elements: the first is the worst
    yield "nan in out", out, ref
    r2 = ref.clone()
    r2[2, 2], r2[3, 3], r2[4, 4] = nan, inf, -inf
    o2 = r2.clone()
    o2[3, 3] = -inf  # inf against -inf
    o2[1, 1] += 1.0
    yield "nan and inf in ref", o2, r2
    yield "same specials pass", r2.clone(), r2
    o3 = ref.clone()
    o3[1, 0] += 0.5
    o3[4, 6] += 0.5  # a tie for the worst violation, in different chunks
    yield "tie", o3, ref
    o4 = ref.clone()
    o4[0, 0], o4[2, 3] = inf, -inf
    yield "inf in out", o4, ref
    yield "zero reference", torch.full((5, 3), 1e-3), torch.zeros(5, 3)
    yield "float64", ref.double() + 1e-3, ref.double()
    yield "float16", (ref + 0.02).half(), ref.half()
    ints = torch.arange(12).reshape(3, 4)
    yield "integers", ints + (ints == 7), ints
    t = ref.t()  # a non-contiguous reference
    yield "non-contiguous ref", t.contiguous() + (torch.arange(42).reshape(7, 6) == 20) * 1.0, t
    yield "declared shape", (ref + (torch.arange(42).reshape(6, 7) == 9) * 1.0).reshape(42), ref
    yield "0-d", torch.tensor(2.5), torch.tensor(2.0)
    yield "3-d rows longer than a chunk", ref.reshape(1, 6, 7) + 1e-3, ref.reshape(1, 6, 7)


@pytest.mark.parametrize("name,out,ref", list(cases()), ids=[c[0] for c in cases()])
def test_chunked_compare_equals_the_whole_tensor_verdict(name, out, ref):
    atol, rtol = correctness.tolerance("default", ref.dtype)
    want = whole_tensor_compare(out, ref, atol, rtol)
    for chunk in (1, 2, 5, 7, 13, 1 << 22):
        got = correctness.compare(out, ref, atol, rtol, chunk=chunk)
        assert fields(got) == tuple(repr(v) for v in want), (name, chunk)


def test_pieces_cover_every_element_once_in_order():
    for shape in [(6, 7), (3, 4, 5), (1, 50), (50,), (), (2, 0, 3)]:
        for chunk in (1, 3, 7, 20, 1000):
            n = math.prod(shape)
            t = torch.arange(n).reshape(shape)
            flat = [t[i].reshape(-1) for i, _ in correctness.pieces(shape, chunk)]
            offsets = [o for _, o in correctness.pieces(shape, chunk)]
            assert all(p.numel() <= max(chunk, 1) for p in flat), (shape, chunk)
            joined = torch.cat(flat) if flat else torch.zeros(0, dtype=torch.long)
            assert joined.tolist() == list(range(n)), (shape, chunk)
            assert [int(p[0]) for p in flat if p.numel()] == [o for p, o in zip(flat, offsets) if p.numel()]


def test_fingerprint_tells_bit_changes_apart():
    x = torch.randn(9, 11)
    for chunk in (4, 1 << 22):
        fp = correctness.fingerprint(x, chunk)
        assert fp == correctness.fingerprint(x.clone(), chunk)
        y = x.clone()
        y.view(-1)[50] = torch.nextafter(y.view(-1)[50], torch.tensor(math.inf))
        assert correctness.fingerprint(y, chunk) != fp
        z = x.clone()
        z[0, 0], z[0, 1] = x[0, 1], x[0, 0]  # a swap keeps the plain sum
        assert correctness.fingerprint(z, chunk) != fp
    assert correctness.fingerprint(torch.tensor([0.0])) != correctness.fingerprint(torch.tensor([-0.0]))
    assert correctness.fingerprint(torch.tensor([True, False])) != correctness.fingerprint(torch.tensor([False, True]))


def test_abs_max_keeps_a_nan():
    t = torch.tensor([1.0, math.nan, -3.0, 2.0])
    assert math.isnan(correctness.abs_max(t, 1))
    assert correctness.abs_max(torch.tensor([1.0, -3.0, 2.0]), 1) == 3.0
    assert correctness.abs_max(torch.zeros(0)) == 0.0


def test_fp64_diagnosis_in_chunks_says_the_same():
    x = torch.linspace(-1, 1, 101, dtype=torch.float32)
    exact = lambda ins: [ins[0] * 2]  # noqa: E731
    sloppy = [x * 2 + torch.where(x > 0.5, 1e-3, 0.0)]
    cand = [x * 2 + torch.where(x < -0.9, 1e-2, 0.0)]
    for c, r in [(cand, sloppy), ([x * 2], sloppy), (sloppy, [x * 2])]:
        whole = correctness.fp64_diagnosis(exact, [x], c, r, 0, "default")
        assert correctness.fp64_diagnosis(exact, [x], c, r, 0, "default", chunk=7) == whole


def test_rescaling_leaves_the_inputs_it_was_given_alone():
    # get_inputs() may hand out a tensor it keeps (a module-level global): rescaling must copy.
    x = torch.rand(4, 4)
    before = x.clone()
    (y,) = correctness.rescale_inputs([x])
    assert torch.equal(x, before) and torch.equal(y, before * 4.0 - 2.0)


# -- the protocol's peak and what stays live -----------------------------------------------------

ROWS, COLS = 512, 2048   # U = 4 MiB in and out
U = ROWS * COLS * 4


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(correctness, "CHUNK", 1 << 14)


def test_the_protocols_peak_is_what_one_trial_needs(tmp_path, small_chunks):
    w = Worker("cpu")
    info = w.load(problem(tmp_path, "relu", RELU, ROWS=ROWS, COLS=COLS))
    assert info["memory"]["fits"] and info["memory"]["keep_on"] == "device"
    with LiveBytes() as live:
        r = w.evaluate(kernel.PyKernel(relu_desc(ROWS, COLS), relu_into), min_reps=30)
    assert r["verdict"] == "ok", r["error"]
    c = r["correctness"]
    assert c["rescaled_trial"] == "kept" and c["recheck"]["passed"] and c["bitwise_repeatable"]
    assert {t["order"] for t in c["trials"]} == {"reference-first", "candidate-first"}
    # A trial holds its inputs and a clone (2U), the candidate's buffer, the reference's output
    # and the previous trial's (3U; on a GPU those two live on the host), chunk-sized scratch and
    # the guard zones around the candidate's buffer: 5U + scratch + guards. Before the plan every
    # trial's outputs were kept, run 1's output was copied and compare() made full-size
    # temporaries: over 15U.
    scratch = correctness.scratch_bytes()
    assert live.peak <= 5 * U + scratch + memplan.guard_bytes(1), live.peak / U
    assert live.peak <= info["memory"]["need_bytes"]
    assert live.now() == 0  # nothing of the candidate stays


def test_compare_scratch_stays_within_its_bound():
    a = torch.randn(300, 1000, dtype=torch.float64)
    b = a + 1e-3
    b[7, 7] = math.nan
    with LiveBytes() as live:
        correctness.compare(b, a, 1e-4, 1e-4, chunk=1 << 12)
    assert 0 < live.peak <= correctness.scratch_bytes(1 << 12), live.peak


def test_memory_is_released_after_every_kind_of_candidate(tmp_path, small_chunks):
    w = Worker("cpu")
    w.load(problem(tmp_path, "scale", SCALE, N=256))
    good = lambda t, s: t[2].copy_(t[0] @ t[1])  # noqa: E731
    with LiveBytes() as live:
        for fn, verdict in [(good, "ok"),
                            (lambda t, s: t[2].copy_(t[0] @ t[1] + 1e-2), "mismatch"),   # + the float64 diagnosis
                            (lambda t, s: 4, "launch_error"),
                            (lambda t, s: (_ for _ in ()).throw(RuntimeError("boom")), "launch_error")]:
            r = w.evaluate(kernel.PyKernel(scale_desc(256), fn), min_reps=30)
            assert r["verdict"] == verdict, r["error"]
            assert live.now() == 0, (verdict, live.now())
        assert "against a float64 evaluation" in w.evaluate(
            kernel.PyKernel(scale_desc(256), lambda t, s: t[2].copy_(t[0] @ t[1] + 1e-2)), do_timing=False)["error"]
        assert live.now() == 0  # the float64 model is dropped after its diagnosis


def test_the_previous_problem_is_released_when_the_next_loads(tmp_path, small_chunks, monkeypatch):
    # a problem above the worker's keeping size (worker.KEEP_ONE_BYTES; here every problem is)
    from ucutlass_torch import worker as worker_mod
    monkeypatch.setattr(worker_mod, "KEEP_ONE_BYTES", 0)
    w = Worker("cpu")
    with LiveBytes() as live:
        w.load(problem(tmp_path, "scale", SCALE, N=512))
        r = w.evaluate(kernel.PyKernel(scale_desc(512), lambda t, s: t[2].zero_()), do_timing=False)
        assert r["verdict"] == "mismatch"
        w.load(problem(tmp_path, "relu", RELU, ROWS=8, COLS=8))
        assert live.now() < 512 * 512 * 4, live.now()  # the 1 MiB weight of the first problem is gone


# -- refusing up front ---------------------------------------------------------------------------

def test_a_problem_that_cannot_fit_is_refused_before_any_candidate_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(memplan, "device_memory", lambda device: (3 * U, 64 * U))
    w = Worker("cpu")
    info = w.load(problem(tmp_path, "relu", RELU, ROWS=ROWS, COLS=COLS))
    mem = info["memory"]
    assert not mem["fits"]
    assert mem["message"].startswith("does not fit in host memory: an evaluation under the contract needs about")
    assert "inputs 2 x 4 MiB" in mem["message"] and "12 MiB of 256 MiB is free" in mem["message"]
    calls = []
    r = w.evaluate(kernel.PyKernel(relu_desc(ROWS, COLS), lambda t, s: calls.append(1)))
    assert (r["verdict"], r["phase"], r["error"]) == ("launch_error", "memory", mem["message"])
    assert calls == [] and r["correctness"] is None
    resp = w.handle({"id": 1, "cmd": "baseline", "modes": ["eager"]})
    assert resp["status"] == "error" and resp["error"] == mem["message"]


def test_an_eager_forward_out_of_memory_is_a_refusal(tmp_path):
    src = RELU.replace("return torch.relu(x)",
                       "raise torch.cuda.OutOfMemoryError('CUDA out of memory. Tried to allocate 6.00 GiB')")
    w = Worker("cpu")
    info = w.load(problem(tmp_path, "oom", src, ROWS=4, COLS=4))
    assert not info["memory"]["fits"] and info["outputs"] == []
    assert ("the eager forward alone ran out of memory (CUDA out of memory. Tried to allocate 6.00 GiB)"
            in info["memory"]["message"])


def test_the_float64_diagnosis_is_skipped_when_it_cannot_fit(tmp_path, monkeypatch):
    w = Worker("cpu")
    w.load(problem(tmp_path, "scale", SCALE, N=256))
    monkeypatch.setattr(memplan, "device_memory", lambda device: (1 * MiB, 64 * MiB))
    r = w.evaluate(kernel.PyKernel(scale_desc(256), lambda t, s: t[2].zero_()), do_timing=False)
    assert r["verdict"] == "mismatch"
    assert "(no float64 pass or diagnosis: MemoryError: the float64 model and forward need about" in r["error"], r["error"]

