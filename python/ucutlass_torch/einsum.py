"""torch.einsum -> Problem IR ops (docs/problem-ir.md, "einsum").

The IR has no einsum: an einsum of one or two operands is written with the ops a person would use
instead (sum, permute, reshape, matmul, mul), so the SOL model and the lowering need nothing new.
Each op carries `"from": "einsum('<equation>')"` so a refusal downstream names the einsum.

Two operands, after summing away each operand's indices that appear nowhere else:
- a contraction (a shared index missing from the output, and a free index on either side) is one
  matmul: A permuted to [batch..., M..., K...], B to [batch..., K..., N...], the groups flattened
  with reshape where a group has several indices, and the result reshaped and permuted to the
  output's order. Without batch indices A keeps its leading indices ([b,i,j,l] @ [l,k] stays a
  broadcasting matmul), and an output listing B's indices before A's swaps the operands (C^T =
  B^T A^T), so 'ij,jk->ki' needs no permute of the result;
- otherwise (an outer or elementwise product, or a dot product) a broadcasting mul, then a sum.
One operand: a sum over the indices missing from the output, then a permute.
Three or more operands: pairs from the left, as torch.einsum contracts them without opt_einsum:
the first two into the indices the output or a later operand still names (in their order of
appearance), that result with the third, and so on; each pair as above.

What stays `opaque` (with `equation` and `why` in attrs): an index repeated within one operand (a
diagonal or trace), an index whose sizes differ (broadcasting), and '...' standing for different
numbers of dimensions in different operands.
"""

from __future__ import annotations

import math
import string
from typing import List, Optional, Sequence, Tuple

from .ops import Call, Mapped, Operand, Shape, Step, Unmapped


def expand(c: Call) -> List[Mapped]:
    """The IR ops computing ``c`` (an aten::einsum call), the last one writing the result. Raises
    Unmapped when the einsum is not one the IR writes."""
    eq = c.args["equation"]
    xs: Sequence[Operand] = list(c.args["tensors"])
    terms, out = _parse(eq, [len(x.info.shape) for x in xs])
    sizes = _sizes(terms, xs)
    b = _Builder(c.out.dtype)
    vals = [(x, t) for x, t in zip(xs, terms)]
    if len(xs) == 1:
        x, t = b.sum_away(*vals[0], keep=out, sizes=sizes)
        x, t = b.permute(x, t, out, sizes)
    else:
        acc = vals[0]
        for i in range(1, len(vals)):
            later = "".join(t for _, t in vals[i + 1:])
            seen = acc[1] + vals[i][1]
            keep = out if i == len(vals) - 1 else "".join(dict.fromkeys(ch for ch in seen if ch in out + later))
            acc = _pair(b, acc, vals[i], keep, sizes)
        (x, t) = acc
    if not b.steps:
        b.add("clone", [x], {}, 0, [sizes[i] for i in t])  # 'ij->ij': a copy
    for m in b.steps:
        m.origin = f"einsum('{eq}')"
    return b.steps


def _parse(eq: str, ranks: List[int]) -> Tuple[List[str], str]:
    eq = eq.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise Unmapped(f"names {len(terms)} operands but receives {len(ranks)}")
    spare = [ch for ch in string.ascii_letters if ch not in eq]
    ell: Optional[str] = None
    for i, (t, r) in enumerate(zip(terms, ranks)):
        if "..." in t:
            n = r - (len(t) - 3)
            if ell is not None and len(ell) != n:
                raise Unmapped("'...' stands for different numbers of dimensions in different operands")
            ell = "".join(spare[:n])
            terms[i] = t.replace("...", ell)
    for i, t in enumerate(terms):
        if not t.isalpha() or len(t) != ranks[i]:
            raise Unmapped(f"operand {i} '{t}' does not name each of its {ranks[i]} dimensions with one letter")
        rep = next((ch for ch in t if t.count(ch) > 1), None)
        if rep is not None:
            raise Unmapped(f"repeats index '{rep}' in operand {i} (a diagonal or trace)")
    if arrow:
        out = rhs.replace("...", ell or "")
    else:  # implicit output: '...' then the indices used once, in alphabetical order
        once = sorted(ch for ch in set("".join(terms)) if "".join(terms).count(ch) == 1 and ch not in (ell or ""))
        out = (ell or "") + "".join(once)
    return terms, out


def _sizes(terms: List[str], xs: Sequence[Operand]) -> dict:
    sizes: dict = {}
    for t, x in zip(terms, xs):
        for ch, n in zip(t, x.info.shape):
            if sizes.setdefault(ch, n) != n:
                raise Unmapped(f"index '{ch}' has sizes {sizes[ch]} and {n} (einsum broadcasting)")
    return sizes


class _Builder:
    """Collects the expansion's ops; values are Operands (the call's tensors) or Steps."""

    def __init__(self, dtype: str):
        self.dtype = dtype
        self.steps: List[Mapped] = []

    def add(self, op: str, inputs: list, attrs: dict, flops: int, shape: List[int], cls: str = "simt") -> Step:
        self.steps.append(Mapped(op, inputs, attrs, flops, cls, out=Shape(list(shape), self.dtype)))
        return Step(len(self.steps) - 1)

    def sum_away(self, x, t: str, keep: str, sizes: dict):
        dims = [i for i, ch in enumerate(t) if ch not in keep]
        if not dims:
            return x, t
        rest = "".join(ch for ch in t if ch in keep)
        numel = math.prod(sizes[ch] for ch in t)
        return self.add("sum", [x], {"dims": dims, "keepdim": False}, numel, [sizes[ch] for ch in rest]), rest

    def permute(self, x, t: str, order: str, sizes: dict):
        if t == order:
            return x, t
        return self.add("permute", [x], {"dims": [t.index(ch) for ch in order]}, 0, [sizes[ch] for ch in order]), order

    def reshape(self, x, shape: List[int], new: List[int]):
        if list(shape) == list(new):
            return x
        return self.add("reshape", [x], {"shape": list(new)}, 0, new)


def _pair(b: _Builder, av, bv, out: str, sizes: dict):
    (xa, ta), (xb, tb) = av, bv
    xa, ta = b.sum_away(xa, ta, keep=out + tb, sizes=sizes)
    xb, tb = b.sum_away(xb, tb, keep=out + ta, sizes=sizes)
    batch = "".join(ch for ch in out if ch in ta and ch in tb)
    m = "".join(ch for ch in out if ch in ta and ch not in tb)
    n = "".join(ch for ch in out if ch in tb and ch not in ta)
    k = "".join(ch for ch in ta if ch in tb and ch not in out)
    if not k or (not m and not n):
        return _product(b, (xa, ta), (xb, tb), out, k, sizes)
    if out == batch + n + m and out != batch + m + n:  # C^T = B^T A^T: no permute of the result
        (xa, ta), (xb, tb), m, n = (xb, tb), (xa, ta), n, m
    xa, ta = b.permute(xa, ta, batch + m + k, sizes)
    xb, tb = b.permute(xb, tb, batch + k + n, sizes)
    size = lambda s: math.prod(sizes[ch] for ch in s)  # noqa: E731
    kk, nn_ = size(k), size(n)
    if not batch and m and len(k) == 1 and len(n) <= 1:
        a_shape = [sizes[ch] for ch in m] + [kk]   # leading indices broadcast: [b,i,j,l] @ [l,k]
    else:
        a_shape = [sizes[ch] for ch in batch] + [size(m), kk]
    b_shape = [sizes[ch] for ch in batch] + [kk, nn_]
    xa = b.reshape(xa, [sizes[ch] for ch in ta], a_shape)
    xb = b.reshape(xb, [sizes[ch] for ch in tb], b_shape)
    r_shape = a_shape[:-1] + [nn_]
    r = b.add("matmul", [xa, xb], {}, 2 * math.prod(r_shape) * kk, r_shape, "tensor")
    t = batch + m + n
    r = b.reshape(r, r_shape, [sizes[ch] for ch in t])
    return b.permute(r, t, out, sizes)


def _product(b: _Builder, av, bv, out: str, k: str, sizes: dict):
    """A broadcasting mul in the order out + k, then the sum over k."""
    full = out + k
    shape = [sizes[ch] for ch in full]
    ops = []
    for x, t in (av, bv):
        order = "".join(ch for ch in full if ch in t)
        x, t = b.permute(x, t, order, sizes)
        new = [sizes[ch] if ch in t else 1 for ch in full]
        while len(new) > len(t) and new[0] == 1 and full[len(full) - len(new)] not in t:
            new.pop(0)  # broadcasting supplies missing leading dims
        ops.append(b.reshape(x, [sizes[ch] for ch in t], new))
    r = b.add("mul", ops, {}, math.prod(shape), shape)
    if not k:
        return r, out
    return b.add("sum", [r], {"dims": list(range(len(out), len(full))), "keepdim": False}, math.prod(shape),
                 [sizes[ch] for ch in out]), out
