"""The correctness half of the evaluation contract (docs/eval-contract.md §1).

Everything here works on callables, so the same protocol runs a real kernel on a GPU and a Python
stand-in on CPU tensors in the tests:

- ``reference(inputs) -> [tensor]``: the problem's fp32 Model on its own copy of the inputs;
- ``candidate(inputs) -> [tensor]``: the kernel, writing into output buffers freshly filled with
  NaN before every run (kernel.BoundCall does that), so every element must be written; the worker's
  candidate also checks the guard zones around those buffers and raises guard.OutOfBounds;
- ``make_inputs(seed) -> [value]``: get_inputs() under that seed.

:func:`check` runs ≥5 trials with fresh seeds (odd trials run the candidate before the reference),
one rescaled trial kept only if the reference stays finite, runs the candidate twice per trial
(determinism: both runs must pass), and detects degenerate problems. :func:`recheck` is the check
after the timing loop. Tolerance: ``|out − ref| ≤ atol + rtol·|ref|`` elementwise; NaN never passes;
where a profile allows it (``float64_pass``), a run that fails elementwise still passes when the
candidate is no further from the model evaluated in float64 than the fp32 reference is
(float64.reference_class, the contract's reference-class pass).

The reference is out of the candidate's reach: its outputs move to ``ref_home`` (host memory, on a
GPU) as soon as it has run, before any candidate run follows; the trial's inputs, which the
reference and the float64 evaluation read after the candidate has run, are fingerprinted and
checked after every candidate run (a change is guard.OutOfBounds).

Memory (docs/eval-contract.md, "Memory"; memplan counts it): a trial holds only its inputs, the
clone one party runs on, the reference's outputs and the candidate's; everything is released when
the trial ends. Comparisons run in pieces of :data:`CHUNK` elements; the determinism run is
compared bit for bit with the first through a fingerprint, not a copy; degenerate detection
compares each trial's reference outputs with the previous trial's as they are made, and keeps
running statistics.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import float64, fused_checks, guard

# Profile name -> {dtype: (atol, rtol)}; "*" is every other floating dtype. Integer and bool
# outputs are always compared exactly. The one definition is contract_profiles.json, beside this
# file, from which the C++ tool is built too (support/contract_profiles.h).
PROFILES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contract_profiles.json")


def _load_profiles() -> Tuple[Dict[str, Dict[Any, tuple]], Dict[str, bool]]:
    with open(PROFILES_FILE, encoding="utf-8") as f:
        doc = json.load(f)
    tables = {p["name"]: {torch.float16: tuple(p["f16"]), torch.bfloat16: tuple(p["bf16"]), "*": tuple(p["other"])}
              for p in doc["profiles"]}
    return tables, {p["name"]: bool(p.get("float64_pass", False)) for p in doc["profiles"]}


PROFILES, FLOAT64_PASS = _load_profiles()

MIN_TRIALS = 5
SEED_BASE = 1000  # trial k uses seed SEED_BASE + 7919·k; the model is always built under seed 42


def float64_pass(profile: str) -> bool:
    """Whether ``profile`` has the reference-class pass (float64.reference_class)."""
    tolerance(profile, torch.float32)
    return FLOAT64_PASS[profile]


def tolerance(profile: str, dtype: torch.dtype) -> tuple:
    if profile not in PROFILES:
        raise ValueError(f"unknown tolerance profile {profile!r}; known: {', '.join(PROFILES)}")
    if not dtype.is_floating_point:
        return (0.0, 0.0)
    table = PROFILES[profile]
    return table.get(dtype, table["*"])


@dataclass
class Comparison:
    passed: bool
    max_abs: float          # max |out − ref| (inf when any element is NaN/inf where ref is finite)
    max_rel: float          # max |out − ref| / |ref| over elements with ref ≠ 0
    worst_index: List[int]  # the element that violates the tolerance most (or the largest error)
    worst_out: float
    worst_ref: float
    n_bad: int              # elements outside the tolerance (NaN included)
    n_nan: int              # NaN/inf elements in the candidate output where ref is finite
    atol: float
    rtol: float
    message: str = ""


class PhaseClock:
    """Host seconds of an evaluation by phase ("inputs", "reference", "candidate", "checks", ...),
    each exclusive of the phases nested in it. A phase that ends normally ends with ``sync``, so
    the GPU work it queued is counted in it, not in the next one; one that raises is counted
    without it (a failed launch must not fail again in the bookkeeping)."""

    def __init__(self, sync: Callable[[], None] = lambda: None):
        self.sync = sync
        self.seconds: Dict[str, float] = {}
        self._nested: List[float] = []

    @contextlib.contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        self._nested.append(0.0)
        ok = False
        try:
            yield
            ok = True
        finally:
            if ok:
                self.sync()
            dt = time.perf_counter() - start
            inner = self._nested.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + dt - inner
            if self._nested:
                self._nested[-1] += dt


class _NoClock:
    """A PhaseClock that keeps nothing (callers that do not ask for the phases)."""

    def phase(self, name: str):
        return contextlib.nullcontext()


NO_CLOCK = _NoClock()


def _verdict(o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float):
    """The elementwise verdict of :func:`compare` (same shapes and dtype): ``|o − r| ≤ atol +
    rtol·|r|`` with both finite, or the same NaN/inf in both. Returns (ok, diff, bound, ref_finite,
    same_special); compare also scores the violations from the parts."""
    diff = (o - r).abs()
    ref_finite = torch.isfinite(r)
    same_special = (~ref_finite) & ((o == r) | (torch.isnan(o) & torch.isnan(r)))
    bound = atol + rtol * r.abs()
    ok = ((diff <= bound) & ref_finite & torch.isfinite(o)) | same_special
    return ok, diff, bound, ref_finite, same_special


# Comparisons run over pieces of at most CHUNK elements, so a check of a 6 GiB output holds a few
# chunk-sized temporaries instead of several full-size ones (docs/eval-contract.md, "Memory").
CHUNK = 1 << 22
# Bytes of scratch per chunk element a comparison may hold at once (up to ~10 temporaries of 8
# bytes in float64, the kept reference's piece moved from the host included); memplan counts
# CHUNK × this, and test_eval_memory_cpu checks the bound.
SCRATCH_PER_ELEMENT = 96
# Pieces of a fingerprint (elements): larger than CHUNK, as a fingerprint holds one word-sized
# temporary per element and a cached mask, not a comparison's float64 temporaries; a 6 GiB output
# is about 100 pieces instead of 400 (each piece cost launches and a host sync).
FP_PIECE = 1 << 26


def scratch_bytes(chunk: Optional[int] = None) -> int:
    """A comparison's scratch, and the fingerprints' masks the worker keeps once made (32-, 16- and
    8-bit words of FP_PIECE positions: 448 MiB)."""
    return (chunk or CHUNK) * SCRATCH_PER_ELEMENT + FP_PIECE * (4 + 2 + 1)


def pieces(shape: Tuple[int, ...], chunk: Optional[int] = None, prefix: tuple = (), offset: int = 0):
    """Yields (index, flat offset) pairs that cut a tensor of ``shape`` into pieces of at most
    ``chunk`` elements in row-major order: groups of whole rows of the leading dimension, or one
    row at a time (recursively) when a row is longer. ``t[index].reshape(-1)`` is a piece (a view
    when ``t`` is contiguous, else a copy of one piece)."""
    chunk = chunk or CHUNK
    n = math.prod(shape)
    if n <= chunk:
        yield prefix, offset
    elif len(shape) == 1:
        for a in range(0, n, chunk):
            yield prefix + (slice(a, min(a + chunk, n)),), offset + a
    else:
        row = math.prod(shape[1:])
        if row <= chunk:
            step = chunk // row
            for a in range(0, shape[0], step):
                yield prefix + (slice(a, min(a + step, shape[0])),), offset + a * row
        else:
            for i in range(shape[0]):
                yield from pieces(shape[1:], chunk, prefix + (i,), offset + i * row)


def _piece(t: torch.Tensor, index: tuple, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return t[index].reshape(-1).to(device=device, dtype=dtype)


def _nanmax(a: float, b: float) -> float:
    """max() that keeps a NaN, as torch's max does (Python's drops it or not by argument order)."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)


def abs_max(t: torch.Tensor, chunk: Optional[int] = None) -> float:
    """max|t| over every element (NaN when any is NaN; 0 for an empty tensor), piece by piece, read
    once."""
    # one temporary an element: pieces of FP_PIECE unless told
    parts = [t[index].abs().max().to(torch.float64) for index, _ in pieces(tuple(t.shape), chunk or FP_PIECE)
             if t[index].numel()]
    return float(torch.stack(parts).max().item()) if parts else 0.0


def all_finite(t: torch.Tensor, chunk: Optional[int] = None) -> bool:
    """Every element finite, piece by piece, read once."""
    if not t.numel():
        return True
    return bool(torch.stack([torch.isfinite(t[index]).all() for index, _ in pieces(tuple(t.shape), chunk or FP_PIECE)]).all())


_FP_MASKS: Dict[Any, torch.Tensor] = {}


def _fp_mask(n: int, word: torch.dtype, device: torch.device) -> torch.Tensor:
    """A fixed position-dependent pattern of ``n`` words (a multiplicative hash of the position),
    made once per word type and device at the largest size asked."""
    key = (word, str(device))
    m = _FP_MASKS.get(key)
    if m is None or m.numel() < n:
        size = max(n, 1 << 20)
        bits = {torch.int32: 31, torch.int16: 15, torch.uint8: 8}[word]
        pos = torch.arange(size, dtype=torch.int64, device=device)
        m = ((pos * 2654435761 + 40503) % (1 << bits)).to(word)
        _FP_MASKS[key] = m
    return m[:n]


def fingerprints(tensors: Sequence[torch.Tensor], chunk: Optional[int] = None, fused: Any = True) -> List[tuple]:
    """A digest of each tensor's bits, to tell whether the determinism run repeated the first run
    bit for bit (and whether memory a candidate was not given changed) without keeping a copy: its
    words (32-bit, else 16-bit, else bytes) summed, and summed after an XOR with a fixed
    position-dependent mask, each piece's second sum weighted by its place, so a swap of two
    elements changes it. Sums are int64 on the device (wrapping alike for equal inputs); all the
    tensors' sums are read in one transfer. A contiguous tensor is cut into slices of its words
    (five operations a piece: the op dispatch, not the GPU, was the cost, run CS). On a GPU with
    the fused kernels (``fused``: True looks them up, :func:`_fused_library`; False never; or a
    fused_checks.Library), a contiguous tensor's two sums are one read of its words, with the
    same values."""
    step = chunk or FP_PIECE
    sums = []
    for t in tensors:
        word = torch.int32 if t.element_size() % 4 == 0 else torch.int16 if t.element_size() % 2 == 0 else torch.uint8
        if t.is_contiguous():
            w = t.detach().reshape(-1).view(word)
            lib = None
            if fused is True:
                lib = _fused_library(t.device) if t.is_cuda and w.numel() else None
            elif fused is not False and w.numel():
                lib = fused
            pair = lib.fingerprint(w, step) if lib is not None else None
            if pair is not None:
                sums.append(pair)
                continue
            parts = [w[a:a + step] for a in range(0, w.numel(), step)]
        else:
            parts = [t[index].reshape(-1).view(word) for index, _ in pieces(tuple(t.shape), step)]
        plain = [p.sum(dtype=torch.int64) for p in parts]
        mixed = [torch.bitwise_xor(p, _fp_mask(p.numel(), word, p.device)).sum(dtype=torch.int64) for p in parts]
        if not parts:
            sums.append(torch.zeros(2, dtype=torch.int64, device=t.device))
            continue
        place = torch.arange(1, len(parts) + 1, dtype=torch.int64, device=t.device)
        sums.append(torch.stack([torch.stack(plain).sum(), (torch.stack(mixed) * place).sum()]))
    by_device: Dict[Any, List[int]] = {}
    for i, t in enumerate(tensors):
        by_device.setdefault(t.device, []).append(i)
    read: Dict[int, List[int]] = {}
    for idx in by_device.values():
        for i, pair in zip(idx, torch.stack([sums[i] for i in idx]).tolist()):
            read[i] = pair
    return [(tuple(t.shape), t.dtype, read[i][0], read[i][1]) for i, t in enumerate(tensors)]


def fingerprint(t: torch.Tensor, chunk: Optional[int] = None) -> tuple:
    """:func:`fingerprints` of one tensor."""
    return fingerprints([t], chunk)[0]


def compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float,
            chunk: Optional[int] = None) -> Comparison:
    """Elementwise ``|out − ref| ≤ atol + rtol·|ref|``. A NaN in ``out`` never passes; a NaN in
    ``ref`` passes only against NaN at the same place (and inf only against the same inf). Runs
    piece by piece on ``out``'s device (``ref`` may be kept on the host); the verdict and every
    statistic equal those of one pass over the whole tensor (the worst element is the first of
    the highest violation score, as torch.argmax picks)."""
    if tuple(out.shape) != tuple(ref.shape) and out.numel() == ref.numel():
        # A kernel library declares its own shapes (a kept reduction dim [M, 1] is written [M],
        # a 0-d loss [1]); element count and row-major order are what must agree.
        out = out.reshape(ref.shape)
    if tuple(out.shape) != tuple(ref.shape):
        return Comparison(False, math.inf, math.inf, [], math.nan, math.nan, -1, 0, atol, rtol,
                          f"shape {list(out.shape)} differs from the reference's {list(ref.shape)}")
    if out.dtype != ref.dtype:
        return Comparison(False, math.inf, math.inf, [], math.nan, math.nan, -1, 0, atol, rtol,
                          f"dtype {out.dtype} differs from the reference's {ref.dtype}")
    if out.numel() == 0:
        return Comparison(True, 0.0, 0.0, [], 0.0, 0.0, 0, 0, atol, rtol)
    wide = torch.float64 if ref.dtype == torch.float64 else torch.float32
    out, ref = out.detach(), ref.detach()
    dev = out.device
    quick = _compare_finite(out, ref, atol, rtol, wide, chunk)
    if quick is not None:
        return quick
    # Every statistic stays on the device, piece by piece, and is read once at the end: a 6 GiB
    # output is about 400 pieces, and a host read after each (six of them) held the GPU idle.
    n_bad = torch.zeros((), dtype=torch.int64, device=dev)
    n_nan = torch.zeros((), dtype=torch.int64, device=dev)
    max_abs = torch.zeros((), dtype=wide, device=dev)
    max_rel = torch.zeros((), dtype=wide, device=dev)
    any_nz = torch.zeros((), dtype=torch.bool, device=dev)
    scores, places, got, expected = [], [], [], []  # each piece's worst element
    for index, offset in pieces(tuple(ref.shape), chunk):
        o = _piece(out, index, dev, wide)
        r = _piece(ref, index, dev, wide)
        ok, diff, bound, ref_finite, same_special = _verdict(o, r, atol, rtol)
        n_bad += (~ok).sum()
        del ok
        unwritten = ref_finite & ~torch.isfinite(o)
        n_nan += unwritten.sum()
        # Violation score: how far past the bound (NaN/inf in out counts as infinitely far).
        score = torch.where(unwritten, torch.full_like(diff, math.inf), diff - bound)
        del unwritten, bound
        score = torch.where(same_special, torch.full_like(diff, -math.inf), score)
        score = torch.nan_to_num(score, nan=math.inf)
        at = torch.argmax(score)
        # copies, not views (indexing by a 0-d tensor is a view that would keep the piece alive)
        scores.append(score.take(at))
        places.append(at + offset)
        got.append(o.take(at))
        expected.append(r.take(at))
        del score, same_special
        finite_diff = torch.nan_to_num(torch.where(ref_finite, diff, torch.zeros_like(diff)), nan=math.inf,
                                       posinf=math.inf)
        del diff
        max_abs = torch.maximum(max_abs, finite_diff.max())
        nz = ref_finite & (r != 0)
        any_nz |= nz.any()
        max_rel = torch.maximum(max_rel, torch.where(nz, finite_diff / r.abs(), torch.zeros_like(r)).max())
    # The worst element is the first of the highest score (torch.argmax picks the first maximum).
    k = torch.argmax(torch.stack(scores))
    stats = torch.stack([n_bad.to(torch.float64), n_nan.to(torch.float64), max_abs.to(torch.float64),
                         max_rel.to(torch.float64), any_nz.to(torch.float64), torch.stack(places)[k].to(torch.float64),
                         torch.stack(got)[k].to(torch.float64), torch.stack(expected)[k].to(torch.float64)]).tolist()
    n_bad, n_nan = int(stats[0]), int(stats[1])
    max_abs, max_rel, any_nz = float(stats[2]), float(stats[3]), bool(stats[4])
    flat, ov, rv = int(stats[5]), stats[6], stats[7]
    if not any_nz:
        max_rel = 0.0 if max_abs == 0 else math.inf
    idx = list(_unravel(flat, tuple(out.shape)))
    msg = ""
    if n_bad:
        msg = (f"{n_bad} of {out.numel()} elements outside |out-ref| <= {atol:g} + {rtol:g}*|ref|"
               f"{f' ({n_nan} NaN/inf, e.g. never written)' if n_nan else ''}; worst at {idx}: "
               f"got {ov!r}, expected {rv!r}")
    return Comparison(n_bad == 0, max_abs, max_rel, idx, float(ov), float(rv), n_bad, n_nan, atol, rtol, msg)


def _compare_finite(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, wide: torch.dtype,
                    chunk: Optional[int], fused: bool = True, raw: bool = False) -> Any:
    """:func:`compare` of the common case, every element of both finite and within tolerance, in
    about 18 operations a piece instead of 55 and, in float32, pieces four to six times larger
    within the same scratch (three temporaries an element instead of a dozen): the GPU is not held waiting for
    the host's op dispatch (a 6 GiB output took about 0.3 s a comparison in 4 Mi-element pieces,
    run CR). Returns None when some element is not finite or fails: the full pass then counts,
    places and scores them. Where it returns, every statistic equals the full pass's (the same
    expressions). On a GPU with the fused kernels (``fused``, :func:`_fused_library`), two
    contiguous float32/bfloat16/float16 tensors on one device are compared in one read of each,
    with the same roundings and the same statistics. ``raw`` (the PyTorch path only, for
    :func:`fused_selftest`): the statistics [max |o−r|, the highest score, max |r|, max rel, its
    flat index] instead of a Comparison."""
    dev = out.device
    if fused and not raw and wide == torch.float32 and out.is_cuda and ref.device == dev and out.dtype == ref.dtype \
            and out.is_contiguous() and ref.is_contiguous():
        lib = _fused_library(dev)
        stats = lib.compare(out.reshape(-1), ref.reshape(-1), atol, rtol) if lib is not None else None
        if stats is not None:
            bad, max_abs, ref_max, max_rel, worst, flat_at = stats.tolist()
            if bad or not (math.isfinite(max_abs) and math.isfinite(ref_max) and worst <= 0):
                return None  # a value not finite, or an element out of tolerance: the full pass
            return _finite_comparison(out, ref, wide, atol, rtol, max_abs, ref_max, max_rel, int(flat_at))
    flat = all(t.is_contiguous() and t.device == dev and t.dtype == wide for t in (out, ref))
    # float32 scratch an element: three temporaries (12 bytes), and the two pieces' copies where
    # they are not slices (8 more): within CHUNK x SCRATCH_PER_ELEMENT either way
    step = (chunk or CHUNK) * ((6 if flat else 4) if wide == torch.float32 else 1)
    if flat:  # slices of the flat views, no copies
        of, rf = out.reshape(-1), ref.reshape(-1)
        cut = ((a, of[a:a + step], rf[a:a + step]) for a in range(0, of.numel(), step))
    else:  # pieces of whole rows, each copied to the device in the wide dtype
        cut = ((offset, _piece(out, index, dev, wide), _piece(ref, index, dev, wide))
               for index, offset in pieces(tuple(ref.shape), step))
    scores, places, d_max, r_max, rel_max = [], [], [], [], []
    for offset, o, r in cut:
        d = torch.sub(o, r).abs_()
        ra = r.abs()
        score = ra.mul(rtol).add_(atol).neg_().add_(d)  # |o - r| - (atol + rtol |r|), as the full pass
        at = torch.argmax(score)
        scores.append(score.take(at))  # a copy: score[at] would be a view keeping the piece alive
        places.append(at + offset)
        del score
        d_max.append(d.max())  # NaN where any o or r is NaN (or inf - inf)
        r_max.append(ra.max())
        rel_max.append(d.div_(ra).masked_fill_(ra == 0, 0).max())
        del d, ra, o, r
    scores_t = torch.stack(scores)
    k = torch.argmax(scores_t)
    stats = torch.stack([torch.stack(d_max).max().to(torch.float64), scores_t[k].to(torch.float64),
                         torch.stack(r_max).max().to(torch.float64), torch.stack(rel_max).max().to(torch.float64),
                         torch.stack(places)[k].to(torch.float64)]).tolist()
    if raw:
        return stats
    max_abs, worst, ref_max, max_rel = stats[0], stats[1], stats[2], stats[3]
    if not (math.isfinite(max_abs) and math.isfinite(ref_max) and worst <= 0):
        return None  # a value not finite, or an element out of tolerance: the full pass
    return _finite_comparison(out, ref, wide, atol, rtol, max_abs, ref_max, max_rel, int(stats[4]))


def _finite_comparison(out: torch.Tensor, ref: torch.Tensor, wide: torch.dtype, atol: float, rtol: float,
                       max_abs: float, ref_max: float, max_rel: float, flat_at: int) -> Comparison:
    """The passing Comparison of :func:`_compare_finite` from its statistics (max |o−r|, max |r|,
    max rel, the flat index of the worst element)."""
    if ref_max == 0:
        max_rel = 0.0 if max_abs == 0 else math.inf
    idx = list(_unravel(flat_at, tuple(out.shape)))
    ov, rv = (t[tuple(idx)].to(wide).item() for t in (out, ref))
    return Comparison(True, max_abs, max_rel, idx, ov, rv, 0, 0, atol, rtol, "")


_FUSED: Dict[Any, Any] = {}


def _fused_library(device: torch.device) -> Optional["fused_checks.Library"]:
    """The fused kernels for ``device`` (fused_checks.load), once a process, and only if they agree
    with the PyTorch path on :func:`fused_selftest`'s battery; else None (the PyTorch path)."""
    key = str(device)
    if key not in _FUSED:
        lib = fused_checks.load(device)
        if lib is not None:
            try:
                problem = fused_selftest(lib, device)
            except Exception as e:  # noqa: BLE001 - a self-test that cannot run keeps PyTorch
                problem = f"{type(e).__name__}: {e}"
            if problem:
                print(f"ucutlass worker: fused checks disagree with the PyTorch path ({problem}); the checks run "
                      "as PyTorch operations", file=sys.stderr)
                lib = None
        _FUSED[key] = lib
    return _FUSED[key]


def fused_selftest(lib: "fused_checks.Library", device: Any) -> str:
    """Runs the fused kernels and the PyTorch path on a battery of tensors (float32, bfloat16 and
    float16; sizes from 1 element to a million and an odd tail; zeros, equal worst scores, an
    element out of tolerance, NaN and inf; fingerprints of every word size over several pieces)
    and returns the first disagreement ('' when none)."""
    dev = torch.device(device)
    gen = torch.Generator(device="cpu").manual_seed(1234)

    def comps(o, r, atol, rtol):
        # [max |o-r|, the highest score, max |r|, max rel, its index], as the quick path has them
        theirs = _compare_finite(o, r, atol, rtol, torch.float32, None, fused=False, raw=True)
        lib_stats = lib.compare(o.reshape(-1), r.reshape(-1), atol, rtol)
        if lib_stats is None:
            return "compare declined a supported dtype"
        bad, max_abs, ref_max, max_rel, worst, flat_at = lib_stats.tolist()
        ok = not bad and math.isfinite(max_abs) and math.isfinite(ref_max) and worst <= 0
        ok_theirs = math.isfinite(theirs[0]) and math.isfinite(theirs[2]) and theirs[1] <= 0
        if ok != ok_theirs:
            return f"verdicts differ ({o.dtype}, {o.numel()} elements)"
        if not ok:
            return ""  # both leave the quick path: the full pass decides
        # every statistic, the highest score's value included (a rounding of the bound shows there)
        mine = [max_abs, worst, ref_max, max_rel, flat_at]
        for name, a, b in zip(("max |o-r|", "highest score", "max |r|", "max rel", "worst index"), theirs, mine):
            if a != b:
                return f"{name}: {b!r} against PyTorch's {a!r} ({o.dtype}, {o.numel()} elements)"
        return ""

    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        atol, rtol = (1e-4, 1e-4) if dtype == torch.float32 else (1e-2, 1e-2)
        for n in (1, 5, 1000, 70001, (1 << 20) + 7):
            r = (torch.randn(n, generator=gen) * 3).to(dtype)
            noise = (torch.rand(n, generator=gen) - 0.5) * (atol + rtol * r.float().abs()) * 1.8
            o = (r.float() + noise).to(dtype)
            r[::97] = 0
            o[::97] = 0
            r, o = r.to(dev), o.to(dev)
            cases = [(o, r)]
            if n >= 1000:  # two equal worst scores: the first must win
                o2, r2 = r.clone(), r.clone()
                r2[[10, n - 3]] = 1.0
                o2[[10, n - 3]] = torch.tensor(1.0 + rtol * 0.5, dtype=dtype)
                cases.append((o2, r2))
            for i, bad in enumerate((float("nan"), float("inf"), 100.0)):  # each must leave the quick path
                o3 = o.clone()
                o3[(n * (i + 1)) // 4] = bad
                cases.append((o3, r))
            r4 = r.clone()
            r4[n // 2] = float("inf")
            cases.append((o, r4))
            for a, b in cases:
                why = comps(a, b, atol, rtol)
                if why:
                    return why
    for dtype in (torch.float32, torch.float16, torch.uint8, torch.float64):
        for n in (1, 999, 12345):
            t = (torch.randn(n, generator=gen) * 100).abs().to(dtype).to(dev)
            for step in (None, 1000, 4096):
                a = fingerprints([t], step, fused=False)
                b = fingerprints([t], step, fused=lib)
                if a != b:
                    return f"fingerprint of {n} {dtype} in pieces of {step}: {b} against PyTorch's {a}"
    return ""


def _unravel(flat: int, shape: tuple):
    idx = []
    for d in reversed(shape):
        idx.append(flat % d if d else 0)
        flat = flat // d if d else 0
    return reversed(idx)


@dataclass
class TrialResult:
    seed: int
    kind: str             # "random" | "rescaled"
    order: str            # "reference-first" | "candidate-first"
    passed: bool
    runs: int             # candidate runs compared (2 when the determinism check ran)
    max_abs: float = 0.0
    max_rel: float = 0.0
    worst_output: int = 0
    worst_index: List[int] = field(default_factory=list)
    bitwise_repeatable: bool = True
    message: str = ""
    # "allclose": every run passed elementwise; "float64": some run passed only by the
    # reference-class pass; "": the trial failed.
    passed_by: str = ""
    # The float64 comparison, when one ran: per output, the candidate's and the fp32 reference's
    # max abs error against float64 (float64.reference_class).
    float64: List[Dict[str, Any]] = field(default_factory=list)


@dataclass
class CorrectnessReport:
    passed: bool
    profile: str
    trials: List[TrialResult]
    max_abs: float
    max_rel: float
    worst_output: int
    worst_index: List[int]
    degenerate: bool
    degenerate_reason: str
    deterministic: bool          # every second run passed as well
    bitwise_repeatable: bool     # the two runs were bit-identical (informational: split-K may differ)
    message: str                 # the first failure, or ""
    rescaled_trial: str          # "kept" | "skipped: <why>"
    tolerances: List[Dict[str, Any]]
    recheck: Optional[Dict[str, Any]] = None
    # The float64 diagnosis of the first failing trial found the candidate within tolerance of
    # float64 everywhere and the fp32 reference not: the failure is the reference's rounding.
    # Informational: `passed` stays False.
    reference_limited: bool = False
    # How the check passed: "allclose" (every trial and the re-check elementwise), "float64" (some
    # needed the reference-class pass), "" (it did not pass).
    passed_by: str = ""

    def to_json(self) -> Dict[str, Any]:
        d = asdict(self)
        return _finite(d)


def _finite(x):
    """JSON has no inf/NaN: inf -> 1e308-style strings are unfriendly, so use None."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def rescale_inputs(inputs: Sequence[Any]) -> List[Any]:
    """Floating inputs ×4 then shifted by −2 (U[0,1) becomes U[−2,2): negative values and a wider
    range challenge kernels that assume the default distribution). The shift is in place on the
    product, and the caller drops the originals, so the rescaled trial holds no extra copy."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            out.append(x.mul(4.0).sub_(2.0))
        else:
            out.append(x)
    return out


def _clone(inputs: Sequence[Any]) -> List[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def as_list(v: Any) -> List[torch.Tensor]:
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    raise TypeError(f"expected a tensor or a tuple of tensors, got {type(v).__name__}")


def _compare_all(outs: List[torch.Tensor], refs: List[torch.Tensor], profile: str, chunk: Optional[int] = None):
    if len(outs) != len(refs):
        c = Comparison(False, math.inf, math.inf, [], math.nan, math.nan, -1, 0, 0, 0,
                       f"the kernel returns {len(outs)} output(s), the reference {len(refs)}")
        return False, [c]
    comps = []
    for o, r in zip(outs, refs):
        atol, rtol = tolerance(profile, r.dtype)
        comps.append(compare(o, r, atol, rtol, chunk))
    return all(c.passed for c in comps), comps


def _worst(comps: List[Comparison]):
    best = 0
    for i, c in enumerate(comps):
        if (not c.passed and comps[best].passed) or (c.passed == comps[best].passed and c.max_abs > comps[best].max_abs):
            best = i
    return best, comps[best]


def trial_seeds(n: int) -> List[int]:
    return [SEED_BASE + 7919 * k for k in range(n)]


def fp64_diagnosis(reference64: Callable[[List[Any]], Any], inputs: List[Any], outs: List[torch.Tensor],
                   refs: List[torch.Tensor], output: int, profile: str, chunk: Optional[int] = None) -> Tuple[str, bool]:
    """After a failed run: evaluates the reference in float64 on the same inputs and says how far
    the candidate and the reference each are from it on the failing output (float64.diagnose).
    Returns the text and whether the failure is the reference's alone (reference-limited)."""
    try:
        return float64.diagnose(float64.evaluate(reference64, inputs), outs, refs, output, profile, chunk)
    except Exception as e:  # noqa: BLE001 - a diagnosis must never change the verdict
        return float64.no_float64(e, "diagnosis"), False


@dataclass
class Judgement:
    """The verdict on one candidate run: elementwise, else (where the profile has it) the
    reference-class pass; with the float64 diagnosis of a failure when asked for."""
    passed: bool
    passed_by: str                        # "allclose" | "float64" | ""
    comps: List[Comparison]
    float64: List[Dict[str, Any]] = field(default_factory=list)
    note: str = ""                        # appended to a failure's message
    limited: bool = False                 # reference-limited (float64.diagnose)


def judge(outs: List[torch.Tensor], refs: List[torch.Tensor], inputs: List[Any], profile: str,
          reference64: Optional[Callable[[List[Any]], Any]], chunk: Optional[int] = None,
          diagnose: bool = True, allow_float64: bool = True, clock: Any = NO_CLOCK) -> Judgement:
    """One run's verdict. ``refs`` are the fp32 reference's outputs on ``inputs`` (kept where no
    candidate could write); ``reference64`` evaluates the model in float64 on them when the
    elementwise check fails, for the reference-class pass (unless ``allow_float64`` is off: the
    verdict is already decided) and, with ``diagnose``, the diagnosis. A float64 evaluation that
    cannot run (memory, an error) passes nothing and says so. ``clock`` (a PhaseClock) counts the
    comparison as "checks" and the float64 evaluation as "float64"."""
    with clock.phase("checks"):
        ok, comps = _compare_all(outs, refs, profile, chunk)
    if ok:
        return Judgement(True, "allclose", comps)
    want = allow_float64 and float64_pass(profile) and len(outs) == len(refs)
    if reference64 is None or not (want or diagnose):
        return Judgement(False, "", comps)
    what = "pass or diagnosis" if want and diagnose else "pass" if want else "diagnosis"
    try:
        with clock.phase("float64"):
            r64 = float64.evaluate(reference64, inputs)
        details, why = [], ""
        if want:
            passed, details, why = float64.reference_class(outs, refs, r64, [c.passed for c in comps], profile, chunk)
            if passed:
                return Judgement(True, "float64", comps, details)
        note, limited = float64.diagnose(r64, outs, refs, _worst(comps)[0], profile, chunk) if diagnose else ("", False)
        if want:
            note += f"; no reference-class pass: {why}"
        return Judgement(False, "", comps, details, note, limited)
    except Exception as e:  # noqa: BLE001 - a float64 evaluation that cannot run passes nothing
        return Judgement(False, "", comps, [], float64.no_float64(e, what))


# The degenerate test's sample of an output when the reference's outputs are recomputed after the
# candidate (ref_home="after"): every k-th element, at most this many, copied to the host.
WATCH_SAMPLE = 1 << 20


def watch_sample(t: torch.Tensor) -> torch.Tensor:
    """A host copy of ``t``'s elements at a fixed stride (row-major), at most WATCH_SAMPLE of them."""
    flat = (t if t.is_contiguous() else t.contiguous()).reshape(-1)
    step = max(1, -(-flat.numel() // WATCH_SAMPLE))
    return flat[::step].to("cpu", copy=True)


class DegenerateWatch:
    """The degenerate-problem test without keeping every trial's outputs: as each random trial's
    reference outputs are made, whether they still agree with the previous trial's (held until
    then, on the host when the trial moved them there; dropped once two trials differ), and a
    running max|ref|. A problem is degenerate when every floating output has max|ref| ≤ atol
    (zeros would pass), or the outputs of every seed agree within the tolerance (the output does
    not depend on the inputs, so a constant would pass)."""

    def __init__(self, profile: str, chunk: Optional[int] = None, sampled: bool = False):
        self.profile = profile
        self.chunk = chunk
        # sampled: the previous trial's outputs are kept as host copies of a strided sample of at
        # most WATCH_SAMPLE elements each (a check whose reference outputs are recomputed after the
        # candidate, ref_home="after": no reference result stays where a candidate can write).
        self.sampled = sampled
        self.previous: Optional[List[torch.Tensor]] = None
        self.floats: List[int] = []
        self.dtypes: Dict[int, torch.dtype] = {}
        self.max_abs: Dict[int, float] = {}
        self.trials = 0
        self.same = True

    def add(self, refs: List[torch.Tensor]) -> None:
        """One random trial's reference outputs (still where they were made)."""
        if not self.trials:
            self.floats = [i for i, r in enumerate(refs) if r.is_floating_point()]
            self.dtypes = {i: r.dtype for i, r in enumerate(refs)}
            self.max_abs = {i: 0.0 for i in self.floats}
        for i in self.floats:
            self.max_abs[i] = _nanmax(self.max_abs[i], abs_max(refs[i], self.chunk))
        kept = {i: watch_sample(refs[i]) for i in self.floats} if self.sampled and self.same else refs
        if self.trials and self.same and self.previous is not None:
            for i in self.floats:
                atol, rtol = tolerance(self.profile, self.previous[i].dtype)
                if not compare(kept[i], self.previous[i], atol, rtol, self.chunk).passed:
                    self.same = False
                    break
        self.previous = kept if self.same else None
        self.trials += 1

    def moved(self, refs: List[torch.Tensor]) -> None:
        """The outputs just added now live at ``refs`` (the trial moved them to the host)."""
        if self.previous is not None and not self.sampled:
            self.previous = refs

    def verdict(self) -> Tuple[bool, str]:
        if not self.floats:
            return False, ""
        tiny = [(self.max_abs[i], tolerance(self.profile, self.dtypes[i])[0]) for i in self.floats]
        if all(m <= atol for m, atol in tiny):
            return True, "max|ref| = %.3g <= atol = %g: an all-zero output would pass" % (max(m for m, _ in tiny),
                                                                                          tiny[0][1])
        if self.trials >= 2 and self.same:
            return True, "the reference output is the same (within tolerance) for every input seed: a constant would pass"
        return False, ""


class _Sentinel:
    """Fingerprints of a trial's inputs, which the reference (candidate first) and the float64
    evaluation read after the candidate has run: checked after every candidate run."""

    def __init__(self, inputs: Sequence[Any], chunk: Optional[int]):
        self.chunk = chunk
        self.named = {f"input {i}": x for i, x in enumerate(inputs) if isinstance(x, torch.Tensor)}
        self.snap = guard.snapshot(self.named, self._fingerprints)

    def _fingerprints(self, ts: List[torch.Tensor]) -> List[tuple]:
        return fingerprints(ts, self.chunk)

    def verify(self) -> None:
        bad = guard.changed(self.named, self.snap, self._fingerprints)
        if bad:
            raise guard.OutOfBounds(
                f"rejected: wrote outside its outputs: the trial's {', '.join(bad)} changed while the candidate ran "
                "(the candidate runs on a copy of the inputs; the trial's own inputs are memory it was not given)")


class _Protocol:
    """What every trial of :func:`check` shares: the callables, the options and the degenerate watch."""

    def __init__(self, reference, candidate, make_inputs, profile, determinism, sync, chunk, ref_home, reference64,
                 clock):
        self.reference, self.candidate, self.make_inputs = reference, candidate, make_inputs
        self.profile, self.determinism, self.sync, self.chunk = profile, determinism, sync, chunk
        self.ref_home, self.reference64 = ref_home, reference64
        self.clock = clock
        self.watch = DegenerateWatch(profile, chunk, sampled=ref_home == "after")

    def run_candidate(self, inputs: List[Any], sentinel: _Sentinel) -> List[torch.Tensor]:
        # Each party gets its own clone, so a kernel (or a model) that writes its inputs cannot
        # change what the other sees; the clone is dropped as soon as the call returns.
        with self.clock.phase("candidate"):
            outs = as_list(self.candidate(_clone(inputs)))
            self.sync()
            with self.clock.phase("checks"):
                sentinel.verify()
        return outs

    def run_reference(self, inputs: List[Any]) -> List[torch.Tensor]:
        with self.clock.phase("reference"):
            refs = as_list(self.reference(_clone(inputs)))
            self.sync()
        return [r.detach() for r in refs]

    @property
    def after(self) -> bool:
        """The reference's outputs are made again after the candidate's last run instead of kept."""
        return self.ref_home == "after"

    def stash(self, refs: List[torch.Tensor]) -> List[torch.Tensor]:
        """The reference's outputs moved out of the candidate's reach (``ref_home``: host memory
        when the worker runs on a GPU; pageable memory no kernel can address). With "after" they
        stay where they are: no candidate runs before they are compared and dropped."""
        if self.ref_home is None or self.after:
            return refs
        with self.clock.phase("reference"):
            return [r.to(self.ref_home, copy=True) for r in refs]


def _trial(p: _Protocol, k: int, seed: int, kind: str, diagnose: bool) -> Any:
    """One trial; returns (TrialResult, reference_limited, the second run alone failed), or a
    string when a rescaled trial is skipped. ``diagnose``: no trial has failed yet, so a failing
    run gets the float64 diagnosis, and the float64 pass is tried (after a failed trial the
    verdict is decided: later trials are judged elementwise only, sparing their float64 runs). Everything it allocates (its inputs and their clones,
    the reference's outputs, the candidate's) is released when it returns: trials never stack up."""
    with p.clock.phase("inputs"):
        inputs = p.make_inputs(seed)
        if kind == "rescaled":
            if not any(isinstance(x, torch.Tensor) and x.is_floating_point() for x in inputs):
                return "skipped: no floating-point inputs"
            inputs = rescale_inputs(inputs)
    with p.clock.phase("checks"):
        sentinel = _Sentinel(inputs, p.chunk)
    cand_first = (k % 2 == 1)
    outs = p.run_candidate(inputs, sentinel) if cand_first else None
    made = p.run_reference(inputs)
    with p.clock.phase("checks"):
        if kind == "rescaled" and not all(all_finite(r, p.chunk) for r in made if r.is_floating_point()):
            return "skipped: reference not finite on rescaled inputs"
        if kind == "random":
            p.watch.add(made)
    if p.after and outs is None:
        # Reference first, then the candidate: the reference's outputs are dropped before the
        # candidate runs and made again (same inputs, fingerprinted) once it has finished, so the
        # ones it is judged against never existed while candidate code ran.
        del made
        outs = p.run_candidate(inputs, sentinel)
        made = p.run_reference(inputs)
    refs = p.stash(made)
    del made
    if kind == "random":
        p.watch.moved(refs)
    if outs is None:
        outs = p.run_candidate(inputs, sentinel)
    j1 = judge(outs, refs, inputs, p.profile, p.reference64, p.chunk, diagnose, allow_float64=diagnose, clock=p.clock)
    runs, j2, rep = 1, j1, True
    if p.determinism:
        # The second run may write into the same buffers (the worker reuses them, NaN-filled
        # again), so the first run is remembered by a fingerprint of its bits, not a copy.
        with p.clock.phase("checks"):
            first = fingerprints(outs, p.chunk)
        del outs
        if p.after:
            del refs  # not kept while the candidate runs again; made again if the bits differ
        outs = p.run_candidate(inputs, sentinel)
        runs = 2
        with p.clock.phase("checks"):
            rep = first == fingerprints(outs, p.chunk)
        # The same bits get the same verdict; other bits are judged again (no diagnosis).
        if not rep and p.after:
            refs = p.run_reference(inputs)
        j2 = j1 if rep else judge(outs, refs, inputs, p.profile, p.reference64, p.chunk, diagnose=False,
                                  allow_float64=diagnose, clock=p.clock)
    passed = j1.passed and j2.passed
    second_only = j1.passed and not j2.passed
    comps = j2.comps if second_only else j1.comps
    wi, wc = _worst(comps)
    msg = ""
    if not passed:
        which = "second run" if second_only else "first run"
        msg = f"trial {k} ({kind}, seed {seed}, {'candidate' if cand_first else 'reference'} first, {which}): output {wi}: {wc.message}"
        msg += " (the first run passed: the result is not deterministic)" if second_only else j1.note
    passed_by = ("float64" if "float64" in (j1.passed_by, j2.passed_by) else "allclose") if passed else ""
    result = TrialResult(seed, kind, "candidate-first" if cand_first else "reference-first", passed, runs,
                         wc.max_abs, wc.max_rel, wi, wc.worst_index, rep, msg, passed_by,
                         j2.float64 if second_only else j1.float64 or j2.float64)
    return result, j1.limited, second_only


def check(reference: Callable[[List[Any]], Any], candidate: Callable[[List[Any]], Any],
          make_inputs: Callable[[int], List[Any]], profile: str = "default", trials: int = MIN_TRIALS,
          rescaled: bool = True, determinism: bool = True,
          sync: Callable[[], None] = lambda: None,
          reference64: Optional[Callable[[List[Any]], Any]] = None,
          ref_home: Optional[Any] = None, chunk: Optional[int] = None,
          clock: Any = NO_CLOCK) -> CorrectnessReport:
    """Runs the correctness protocol. The reference's outputs move to ``ref_home`` (e.g. "cpu"
    when the candidate runs on a GPU) before any candidate run follows them; with ``ref_home="after"``
    none is kept across a candidate run: every reference output a verdict rests on is made after
    the candidate's last run (a reference-first trial runs the reference again), which costs one
    forward instead of two host transfers of every output (the worker's choice for large outputs). Exceptions raised by
    ``candidate`` (a launch failure, guard.OutOfBounds) propagate to the caller, which records
    them. ``reference64`` (the model in float64), when given, decides the reference-class pass of
    profiles that have it and diagnoses the first failing trial (:func:`judge`). Comparisons run
    in pieces of ``chunk`` elements (CHUNK). ``clock`` (a PhaseClock) gets the seconds of each phase:
    inputs, reference, candidate, checks (comparisons, fingerprints, the degenerate watch), float64."""
    tolerance(profile, torch.float32)  # validates the profile name
    trials = max(MIN_TRIALS, int(trials))
    proto = _Protocol(reference, candidate, make_inputs, profile, determinism, sync, chunk, ref_home, reference64,
                      clock)
    results: List[TrialResult] = []
    all_pass = True
    deterministic = True
    bitwise = True
    reference_limited = False
    first_msg = ""
    overall = None  # (passed, max_abs, output, index) of the worst trial: failing first, then largest error
    max_rel = 0.0
    rescaled_note = "skipped: disabled"
    plan = [(s, "random") for s in trial_seeds(trials)]
    if rescaled:
        plan.append((plan[0][0] + 1, "rescaled"))
    for k, (seed, kind) in enumerate(plan):
        outcome = _trial(proto, k, seed, kind, diagnose=not first_msg)
        if isinstance(outcome, str):
            rescaled_note = outcome
            continue
        if kind == "rescaled":
            rescaled_note = "kept"
        tr, limited, second_run_failed = outcome
        results.append(tr)
        bitwise = bitwise and tr.bitwise_repeatable
        if not tr.passed:
            all_pass = False
            if second_run_failed:
                deterministic = False
            elif not first_msg:
                reference_limited = limited
            first_msg = first_msg or tr.message
        if (overall is None or (not tr.passed and overall[0]) or
                (tr.passed == overall[0] and tr.max_abs > overall[1])):
            overall = (tr.passed, tr.max_abs, tr.worst_output, tr.worst_index)
        max_rel = max(max_rel, tr.max_rel)
    degenerate, reason = proto.watch.verdict()
    tolerances = [{"output": i, "dtype": str(dt).replace("torch.", ""),
                   "atol": tolerance(profile, dt)[0], "rtol": tolerance(profile, dt)[1]}
                  for i, dt in sorted(proto.watch.dtypes.items())]
    overall = overall or (True, 0.0, 0, [])
    passed_by = ("float64" if any(t.passed_by == "float64" for t in results) else "allclose") if all_pass else ""
    return CorrectnessReport(all_pass, profile, results, overall[1], max_rel, overall[2], overall[3], degenerate,
                             reason, deterministic, bitwise, first_msg, rescaled_note, tolerances,
                             reference_limited=reference_limited and not all_pass, passed_by=passed_by)


def recheck(outs: List[torch.Tensor], reference: Callable[[List[Any]], Any],
            make_inputs: Callable[[int], List[Any]], seed: int, profile: str,
            sync: Callable[[], None] = lambda: None,
            reference64: Optional[Callable[[List[Any]], Any]] = None, chunk: Optional[int] = None) -> Dict[str, Any]:
    """The check after the timing loop: ``outs``, what the loop's last repetition wrote (outputs are
    overwritten before every repetition, so they are that repetition's whole work), against the
    reference on the same inputs (``make_inputs(seed)``, made again: the candidate may have written
    its own copy), run after the loop ended, with the reference-class pass where the profile has it."""
    inputs = make_inputs(seed)
    refs = [r.detach() for r in as_list(reference(_clone(inputs)))]
    sync()
    j = judge(list(outs), refs, inputs, profile, reference64, chunk, diagnose=True)
    wi, wc = _worst(j.comps)
    return _finite({"passed": j.passed, "passed_by": j.passed_by, "max_abs": wc.max_abs, "max_rel": wc.max_rel,
                    "worst_output": wi, "worst_index": wc.worst_index, "float64": j.float64,
                    "message": "" if j.passed else f"after timing: output {wi}: {wc.message}{j.note}"})
