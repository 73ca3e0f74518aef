"""The correctness half of the evaluation contract (docs/eval-contract.md §1).

Everything here works on callables, so the same protocol runs a real kernel on a GPU and a Python
stand-in on CPU tensors in the tests:

- ``reference(inputs) -> [tensor]``: the problem's fp32 Model on its own copy of the inputs;
- ``candidate(inputs) -> [tensor]``: the kernel, writing into output buffers freshly filled with
  NaN before every run (kernel.BoundCall does that), so every element must be written;
- ``make_inputs(seed) -> [value]``: get_inputs() under that seed.

:func:`check` runs ≥5 trials with fresh seeds (odd trials run the candidate before the reference),
one rescaled trial kept only if the reference stays finite, runs the candidate twice per trial
(determinism: both runs must pass), and detects degenerate problems. :func:`recheck` is the check
after the timing loop. Tolerance: ``|out − ref| ≤ atol + rtol·|ref|`` elementwise; NaN never passes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

# Profile name -> {dtype: (atol, rtol)}; "*" is every other floating dtype. Integer and bool
# outputs are always compared exactly.
PROFILES: Dict[str, Dict[Any, tuple]] = {
    "default": {torch.float16: (1e-2, 1e-2), torch.bfloat16: (1e-2, 1e-2), "*": (1e-4, 1e-4)},
    "kb-v01": {"*": (1e-2, 1e-2)},
}

MIN_TRIALS = 5
SEED_BASE = 1000  # trial k uses seed SEED_BASE + 7919·k; the model is always built under seed 42


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


def compare(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> Comparison:
    """Elementwise ``|out − ref| ≤ atol + rtol·|ref|``. A NaN in ``out`` never passes; a NaN in
    ``ref`` passes only against NaN at the same place (and inf only against the same inf)."""
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
    o = out.detach().to(wide)
    r = ref.detach().to(wide)
    ok, diff, bound, ref_finite, same_special = _verdict(o, r, atol, rtol)
    bad = ~ok
    n_bad = int(bad.sum().item())
    n_nan = int((ref_finite & ~torch.isfinite(o)).sum().item())
    # Violation score: how far past the bound (NaN/inf in out counts as infinitely far).
    score = torch.where(ref_finite & ~torch.isfinite(o), torch.full_like(diff, math.inf), diff - bound)
    score = torch.where(same_special, torch.full_like(diff, -math.inf), score)
    score = torch.nan_to_num(score, nan=math.inf)
    flat = int(torch.argmax(score.reshape(-1)).item())
    idx = list(_unravel(flat, tuple(out.shape)))
    finite_diff = torch.where(ref_finite, diff, torch.zeros_like(diff))
    finite_diff = torch.nan_to_num(finite_diff, nan=math.inf, posinf=math.inf)
    max_abs = float(finite_diff.max().item())
    nz = ref_finite & (r != 0)
    max_rel = float((finite_diff[nz] / r.abs()[nz]).max().item()) if bool(nz.any()) else (0.0 if max_abs == 0 else math.inf)
    ov = o.reshape(-1)[flat].item()
    rv = r.reshape(-1)[flat].item()
    msg = ""
    if n_bad:
        msg = (f"{n_bad} of {out.numel()} elements outside |out-ref| <= {atol:g} + {rtol:g}*|ref|"
               f"{f' ({n_nan} NaN/inf, e.g. never written)' if n_nan else ''}; worst at {idx}: "
               f"got {ov!r}, expected {rv!r}")
    return Comparison(n_bad == 0, max_abs, max_rel, idx, float(ov), float(rv), n_bad, n_nan, atol, rtol, msg)


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
    # Informational: `passed` stays False (EVAL-CONTRACT §1 judges against the fp32 model).
    reference_limited: bool = False

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
    range challenge kernels that assume the default distribution)."""
    out = []
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            out.append(x * 4.0 - 2.0)
        else:
            out.append(x)
    return out


def _clone(inputs: Sequence[Any]) -> List[Any]:
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]


def _as_list(v: Any) -> List[torch.Tensor]:
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for t in v if isinstance(t, torch.Tensor)]
    raise TypeError(f"expected a tensor or a tuple of tensors, got {type(v).__name__}")


def _compare_all(outs: List[torch.Tensor], refs: List[torch.Tensor], profile: str):
    if len(outs) != len(refs):
        c = Comparison(False, math.inf, math.inf, [], math.nan, math.nan, -1, 0, 0, 0,
                       f"the kernel returns {len(outs)} output(s), the reference {len(refs)}")
        return False, [c]
    comps = []
    for o, r in zip(outs, refs):
        atol, rtol = tolerance(profile, r.dtype)
        comps.append(compare(o, r, atol, rtol))
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
                   refs: List[torch.Tensor], output: int, profile: str) -> Tuple[str, bool]:
    """After a failed trial: evaluates the reference in float64 on the same inputs and says how far
    the candidate and the reference each are from it on the failing output. The verdict does not
    change (the contract's reference is the fp32 model); the text tells a wrong kernel from an
    fp32 reference whose own rounding exceeds the tolerance (long sums near zero). Returns the
    text and whether the failure is the reference's alone (reference-limited): every candidate
    element within tolerance of float64, some reference element not."""
    try:
        wide = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in _clone(inputs)]
        r64 = _as_list(reference64(wide))[output].double()
        o = outs[output].detach().double().reshape(r64.shape)
        r = refs[output].detach().double().reshape(r64.shape)
        atol, rtol = tolerance(profile, refs[output].dtype)
        bad = ~_verdict(o, r, atol, rtol)[0]
        cand_err = float((o - r64).abs().max())
        ref_err = float((r - r64).abs().max())
        cand_ok64 = _verdict(o, r64, atol, rtol)[0]
        ok64 = int(cand_ok64[bad].sum())
        limited = bool(cand_ok64.all()) and not bool(_verdict(r, r64, atol, rtol)[0].all())
        text = (f"; against a float64 evaluation of the reference: candidate max error {cand_err:.3g}, the "
                f"reference's own max error {ref_err:.3g}; {ok64} of the {int(bad.sum())} failing elements are "
                "within tolerance of float64")
        if limited:
            text += ("; reference-limited: the candidate is within tolerance of float64 everywhere, the fp32 "
                     "reference is not")
        return text, limited
    except Exception as e:  # noqa: BLE001 - a diagnosis must never change the verdict
        return f"; (no float64 diagnosis: {type(e).__name__}: {str(e)[:120]})", False


def check(reference: Callable[[List[Any]], Any], candidate: Callable[[List[Any]], Any],
          make_inputs: Callable[[int], List[Any]], profile: str = "default", trials: int = MIN_TRIALS,
          rescaled: bool = True, determinism: bool = True,
          sync: Callable[[], None] = lambda: None,
          reference64: Optional[Callable[[List[Any]], Any]] = None) -> tuple:
    """Runs the correctness protocol. Returns (CorrectnessReport, keep) where keep holds the first
    trial's inputs and reference outputs for :func:`recheck`. Exceptions raised by ``candidate``
    (a launch failure) propagate to the caller, which records them as launch errors.
    ``reference64`` (the model in float64), when given, diagnoses the first failing trial
    (:func:`fp64_diagnosis`); it never changes a verdict."""
    tolerance(profile, torch.float32)  # validates the profile name
    trials = max(MIN_TRIALS, int(trials))
    results: List[TrialResult] = []
    refs_by_trial: List[List[torch.Tensor]] = []
    keep: Dict[str, Any] = {}
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
    tolerances: List[Dict[str, Any]] = []
    for k, (seed, kind) in enumerate(plan):
        inputs = make_inputs(seed)
        if kind == "rescaled":
            if not any(isinstance(x, torch.Tensor) and x.is_floating_point() for x in inputs):
                rescaled_note = "skipped: no floating-point inputs"
                continue
            inputs = rescale_inputs(inputs)
        cand_first = (k % 2 == 1)
        if cand_first:
            outs1 = [t.clone() for t in _as_list(candidate(_clone(inputs)))]
            sync()
            refs = _as_list(reference(_clone(inputs)))
            sync()
        else:
            refs = _as_list(reference(_clone(inputs)))
            sync()
            outs1 = [t.clone() for t in _as_list(candidate(_clone(inputs)))]
            sync()
        if kind == "rescaled":
            if not all(bool(torch.isfinite(r).all()) for r in refs if r.is_floating_point()):
                rescaled_note = "skipped: reference not finite on rescaled inputs"
                continue
            rescaled_note = "kept"
        else:
            refs_by_trial.append([r.detach().clone() for r in refs])
        if not tolerances:
            tolerances = [{"output": i, "dtype": str(r.dtype).replace("torch.", ""),
                           "atol": tolerance(profile, r.dtype)[0], "rtol": tolerance(profile, r.dtype)[1]}
                          for i, r in enumerate(refs)]
        ok1, comps1 = _compare_all(outs1, refs, profile)
        runs = 1
        ok2, rep = True, True
        comps = comps1
        if determinism:
            outs2 = _as_list(candidate(_clone(inputs)))
            sync()
            ok2, comps2 = _compare_all(outs2, refs, profile)
            runs = 2
            rep = len(outs1) == len(outs2) and all(
                a.shape == b.shape and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b)) for a, b in zip(outs1, outs2))
            if ok1 and not ok2:
                comps = comps2
        passed = ok1 and ok2
        wi, wc = _worst(comps)
        msg = ""
        if not passed:
            which = "second run" if ok1 and not ok2 else "first run"
            msg = f"trial {k} ({kind}, seed {seed}, {'candidate' if cand_first else 'reference'} first, {which}): output {wi}: {wc.message}"
            if ok1 and not ok2:
                msg += " (the first run passed: the result is not deterministic)"
                deterministic = False
            elif reference64 is not None and not first_msg:
                diag, limited = fp64_diagnosis(reference64, inputs, outs1, refs, wi, profile)
                msg += diag
                reference_limited = limited
        results.append(TrialResult(seed, kind, "candidate-first" if cand_first else "reference-first", passed, runs,
                                   wc.max_abs, wc.max_rel, wi, wc.worst_index, rep, msg))
        bitwise = bitwise and rep
        if not passed:
            all_pass = False
            first_msg = first_msg or msg
        if (overall is None or (not passed and overall[0]) or
                (passed == overall[0] and wc.max_abs > overall[1])):
            overall = (passed, wc.max_abs, wi, wc.worst_index)
        max_rel = max(max_rel, wc.max_rel)
        if k == 0:
            keep = {"seed": seed, "refs": [r.detach().clone() for r in refs]}
    degenerate, reason = detect_degenerate(refs_by_trial, profile)
    overall = overall or (True, 0.0, 0, [])
    report = CorrectnessReport(all_pass, profile, results, overall[1], max_rel, overall[2], overall[3], degenerate, reason,
                               deterministic, bitwise, first_msg, rescaled_note, tolerances,
                               reference_limited=reference_limited and not all_pass)
    return report, keep


def detect_degenerate(refs_by_trial: List[List[torch.Tensor]], profile: str) -> tuple:
    """A problem is degenerate when every floating output has max|ref| ≤ atol (zeros would pass),
    or the reference outputs of different seeds agree within the tolerance (the output does not
    depend on the inputs, so a constant would pass)."""
    if not refs_by_trial:
        return False, ""
    first = refs_by_trial[0]
    floats = [i for i, r in enumerate(first) if r.is_floating_point()]
    if not floats:
        return False, ""
    tiny = []
    for i in floats:
        atol, _ = tolerance(profile, first[i].dtype)
        m = max(float(refs[i].abs().max().item()) if refs[i].numel() else 0.0 for refs in refs_by_trial)
        tiny.append((m, atol))
    if all(m <= atol for m, atol in tiny):
        return True, "max|ref| = %.3g <= atol = %g: an all-zero output would pass" % (max(m for m, _ in tiny), tiny[0][1])
    if len(refs_by_trial) >= 2:
        same = True
        for i in floats:
            atol, rtol = tolerance(profile, first[i].dtype)
            for other in refs_by_trial[1:]:
                if not compare(other[i], first[i], atol, rtol).passed:
                    same = False
                    break
            if not same:
                break
        if same:
            return True, "the reference output is the same (within tolerance) for every input seed: a constant would pass"
    return False, ""


def recheck(candidate: Callable[[List[Any]], Any], make_inputs: Callable[[int], List[Any]], keep: Dict[str, Any],
            profile: str, sync: Callable[[], None] = lambda: None) -> Dict[str, Any]:
    """The check after the timing loop: the first trial's inputs again, into NaN-poisoned outputs,
    against the reference outputs kept from that trial."""
    if not keep:
        return {"passed": False, "message": "no kept trial to re-check against"}
    outs = _as_list(candidate(make_inputs(keep["seed"])))
    sync()
    ok, comps = _compare_all(outs, keep["refs"], profile)
    wi, wc = _worst(comps)
    return _finite({"passed": ok, "max_abs": wc.max_abs, "max_rel": wc.max_rel, "worst_output": wi,
                    "worst_index": wc.worst_index,
                    "message": "" if ok else f"after timing: output {wi}: {wc.message}"})
