"""The model evaluated in float64, against which the correctness check measures both parties when
the elementwise check fails (docs/eval-contract.md §1):

- :func:`reference_class`, the contract's reference-class pass (profiles with ``float64_pass``,
  the default one): a trial whose elementwise check fails still passes when, for every output, the
  candidate's max abs error against float64 is no larger than the fp32 reference's own. The fp32
  reference rounds in places (cuDNN's TF32 convolutions, long fp32 sums), so a candidate more
  accurate than it can differ from it by more than the tolerance. NaN/inf rules are unchanged:
  wherever the fp32 reference or the float64 value is not finite, the elementwise rule decides,
  and a non-finite candidate element where both are finite makes its error infinite. Integer and
  bool outputs compare exactly, as always.
- :func:`diagnose`, the text appended to a mismatch: how far the candidate and the fp32 reference
  each are from float64 on the worst output, and whether the failure is the reference's alone
  ("reference-limited"). It never changes a verdict.

Both compare piece by piece (correctness.pieces), so a float64 output of any size holds only
chunk-sized temporaries beside it. The float64 outputs come from :func:`evaluate`; the fp32
reference's outputs are the ones the trial kept out of the candidate's reach.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch


def evaluate(reference64: Callable[[List[Any]], Any], inputs: Sequence[Any]) -> List[torch.Tensor]:
    """The reference model in float64 on ``inputs`` widened to float64 (copies)."""
    from .correctness import as_list

    wide = [x.to(torch.float64, copy=True) if isinstance(x, torch.Tensor) and x.is_floating_point()
            else x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    out = as_list(reference64(wide))
    del wide
    return [o.detach() for o in out]


def _as_shape(t: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    return t if t.shape == shape else t.reshape(shape)


def _errors(o: torch.Tensor, r: torch.Tensor, a: torch.Tensor, atol: float, rtol: float, chunk: Optional[int]):
    """(candidate max error, reference max error, elements breaking the NaN/inf rules) of one
    output against float64 ``a``; a NaN error stays NaN (it fails every comparison)."""
    from .correctness import _nanmax, _piece, _verdict, pieces

    cand_err = ref_err = 0.0
    special_bad = 0
    for index, _ in pieces(tuple(a.shape), chunk):
        ap = _piece(a, index, a.device, torch.float64)
        op = _piece(o, index, a.device, torch.float64)
        rp = _piece(r, index, a.device, torch.float64)
        special = ~(torch.isfinite(rp) & torch.isfinite(ap))
        if bool(special.any()):
            special_bad += int((special & ~_verdict(op, rp, atol, rtol)[0]).sum().item())
        zero = torch.zeros_like(ap)
        cand_err = _nanmax(cand_err, float(torch.where(special, zero, (op - ap).abs()).max().item()))
        ref_err = _nanmax(ref_err, float(torch.where(special, zero, (rp - ap).abs()).max().item()))
    return cand_err, ref_err, special_bad


def reference_class(outs: List[torch.Tensor], refs: List[torch.Tensor], r64: List[torch.Tensor],
                    passed: List[bool], profile: str, chunk: Optional[int] = None) -> Tuple[bool, List[Dict[str, Any]], str]:
    """The reference-class pass of one run: (passed, per-output errors, why not). ``passed`` is
    the elementwise verdict per output (an integer output must have passed it)."""
    from .correctness import tolerance

    if not (len(outs) == len(refs) == len(r64)):
        return False, [], "the kernel's outputs do not match the reference's"
    details: List[Dict[str, Any]] = []
    why = ""
    for i, (o, r, a) in enumerate(zip(outs, refs, r64)):
        if not r.is_floating_point():
            details.append({"output": i, "exact": True, "passed": passed[i]})
            if not passed[i] and not why:
                why = f"output {i} is {str(r.dtype).replace('torch.', '')} (compared exactly)"
            continue
        if o.numel() != a.numel() or r.numel() != a.numel():
            return False, details, f"output {i}: element counts differ from the float64 evaluation's"
        atol, rtol = tolerance(profile, r.dtype)
        cand_err, ref_err, special_bad = _errors(_as_shape(o.detach(), a.shape), _as_shape(r.detach(), a.shape), a,
                                                 atol, rtol, chunk)
        ok = special_bad == 0 and cand_err <= ref_err  # False when either is NaN
        details.append({"output": i, "candidate_err": cand_err, "reference_err": ref_err, "passed": ok})
        if not ok and not why:
            why = (f"output {i}: {special_bad} element(s) break the NaN/inf rules" if special_bad else
                   f"output {i}: candidate max error {cand_err:.3g} against float64, above the fp32 reference's own "
                   f"{ref_err:.3g}")
    return not why, details, why


def diagnose(r64: List[torch.Tensor], outs: List[torch.Tensor], refs: List[torch.Tensor], output: int,
             profile: str, chunk: Optional[int] = None) -> Tuple[str, bool]:
    """How far the candidate and the fp32 reference each are from float64 on ``output``. Returns
    the text and whether the failure is the reference's alone (reference-limited): every candidate
    element within tolerance of float64, some reference element not."""
    from .correctness import _nanmax, _piece, _verdict, pieces, tolerance

    a64 = r64[output]
    o = _as_shape(outs[output].detach(), a64.shape)
    r = _as_shape(refs[output].detach(), a64.shape)
    atol, rtol = tolerance(profile, refs[output].dtype)
    cand_err = ref_err = 0.0
    n_bad = ok64 = 0
    cand_all_ok64 = ref_all_ok64 = True
    for index, _ in pieces(tuple(a64.shape), chunk):
        a = _piece(a64, index, a64.device, torch.float64)
        op = _piece(o, index, a64.device, torch.float64)
        rp = _piece(r, index, a64.device, torch.float64)
        bad = ~_verdict(op, rp, atol, rtol)[0]
        cand_ok64 = _verdict(op, a, atol, rtol)[0]
        n_bad += int(bad.sum())
        ok64 += int(cand_ok64[bad].sum())
        cand_all_ok64 = cand_all_ok64 and bool(cand_ok64.all())
        ref_all_ok64 = ref_all_ok64 and bool(_verdict(rp, a, atol, rtol)[0].all())
        cand_err = _nanmax(cand_err, float((op - a).abs().max()))
        ref_err = _nanmax(ref_err, float((rp - a).abs().max()))
    limited = cand_all_ok64 and not ref_all_ok64
    text = (f"; against a float64 evaluation of the reference: candidate max error {cand_err:.3g}, the "
            f"reference's own max error {ref_err:.3g}; {ok64} of the {n_bad} failing elements are "
            "within tolerance of float64")
    if limited:
        text += ("; reference-limited: the candidate is within tolerance of float64 everywhere, the fp32 "
                 "reference is not")
    return text, limited


def no_float64(e: BaseException, what: str) -> str:
    """The note when the float64 evaluation could not run (it does not fit, or raised)."""
    return f"; (no float64 {what}: {type(e).__name__}: {str(e)[:160]})"
