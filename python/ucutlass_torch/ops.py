"""ATen operators -> Problem IR operations (docs/problem-ir.md), with attributes and FLOP counts.

The extractor (extract.py) traces a Model with torch.export, which keeps operators at the
"pre-dispatch" level (aten.linear, aten.layer_norm, aten.scaled_dot_product_attention, ...). Each
traced call is first normalised against its ATen schema into a name -> value dict (``Call``), then
mapped here by the operator's name to one IR op: its name, operand list, attrs, FLOPs and class.
Operators not in the table become ``opaque`` in extract.py.

The FLOP constants below ARE the counting convention of docs/problem-ir.md; src/sol and the tests
rely on them, so change them only together with the document.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

# Per-element FLOPs of elementwise operations (docs/problem-ir.md, "Elementwise").
UNARY_FLOPS: Dict[str, int] = {
    "neg": 1, "abs": 1, "exp": 4, "log": 4, "sqrt": 4, "rsqrt": 4, "reciprocal": 1, "square": 1,
    "sin": 4, "cos": 4, "tanh": 4, "sigmoid": 4, "relu": 1, "relu6": 1, "leaky_relu": 1,
    "gelu": 8, "silu": 5, "mish": 10, "softplus": 6, "elu": 5, "selu": 5, "celu": 5,
    "softsign": 2, "hardtanh": 1, "clamp": 1, "hardswish": 3, "hardsigmoid": 3,
    "log_sigmoid": 6, "erf": 4, "sign": 1, "floor": 1, "ceil": 1, "round": 1, "bitwise_not": 1,
}
BINARY_FLOPS: Dict[str, int] = {
    "add": 1, "sub": 1, "mul": 1, "div": 1, "pow": 4, "maximum": 1, "minimum": 1, "where": 1,
    "eq": 1, "ne": 1, "lt": 1, "le": 1, "gt": 1, "ge": 1,
}
# Per-input-element FLOPs of reductions and row operations.
REDUCTION_FLOPS: Dict[str, int] = {
    "sum": 1, "mean": 1, "prod": 1, "amax": 1, "amin": 1, "max": 1, "min": 1, "argmax": 1,
    "argmin": 1, "logsumexp": 6, "var": 3, "std": 3, "norm": 1,
}
ROW_FLOPS: Dict[str, int] = {
    "softmax": 6, "log_softmax": 6, "layer_norm": 8, "rms_norm": 5, "group_norm": 8,
    "batch_norm": 8, "instance_norm": 8, "cumsum": 1, "cumprod": 1,
}
LOSS_FLOPS: Dict[str, int] = {
    "mse_loss": 3, "l1_loss": 3, "smooth_l1_loss": 3, "huber_loss": 3, "kl_div": 3,
    "cross_entropy": 8, "nll_loss": 3, "hinge_embedding_loss": 3, "cosine_similarity": 3,
    "triplet_margin_loss": 3,
}
VIEW_OPS = {
    "view", "reshape", "permute", "transpose", "t", "expand", "squeeze", "unsqueeze", "flatten",
    "contiguous", "clone", "cat", "stack", "split", "chunk", "slice", "select", "flip", "pad",
    "masked_fill", "tril", "triu", "gather", "index_select",
}
MATMUL_OPS = {"matmul", "mm", "bmm", "linear", "addmm", "baddbmm", "conv1d", "conv2d", "conv3d",
              "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "sdpa"}

POOL_OPS = {"max_pool", "avg_pool", "adaptive_avg_pool"}

# Every op name the IR may contain (the C++ reader's vocabulary), "opaque" included.
VOCABULARY = (set(UNARY_FLOPS) | set(BINARY_FLOPS) | set(REDUCTION_FLOPS) | set(ROW_FLOPS)
              | set(LOSS_FLOPS) | VIEW_OPS | MATMUL_OPS | POOL_OPS | {"to", "dropout", "opaque"})

REDUCTION_NAMES = {0: "none", 1: "mean", 2: "sum"}


@dataclass
class Shape:
    """Static facts about one traced tensor value."""
    shape: List[int]
    dtype: str  # torch dtype name, e.g. "float32"

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class Call:
    """A traced ATen call normalised by its schema: ``args`` maps argument name -> value, where a
    tensor value is an ``Operand`` and lists of tensors are lists of ``Operand``."""
    packet: str                    # "add", "linear", ...
    overload: str                  # "Tensor", "default", ...
    args: Dict[str, Any]
    outs: List[Shape]              # output tensor facts (flattened)

    def shape(self, name: str) -> Shape:
        v = self.args[name]
        return v.info

    @property
    def out(self) -> Shape:
        return self.outs[0]


@dataclass
class Operand:
    """A tensor operand: the IR name it resolves to (filled by the extractor) and its facts."""
    ref: Any        # the extractor's handle (fx node)
    info: Shape


@dataclass
class Mapped:
    op: str
    inputs: List[Any]              # Operand, {"scalar": v}, None (absent optional operand), or Step
    attrs: Dict[str, Any] = field(default_factory=dict)
    flops: int = 0
    flop_class: str = "simt"
    out: Optional[Shape] = None    # a step of an expansion: its result (the last step's is the call's)
    origin: str = ""               # a step of an expansion: the call it comes from (JSON "from")


class Unmapped(Exception):
    """Raised by a handler: this call stays `opaque`; the message says why (recorded as attrs.why)."""


@dataclass
class Step:
    """An operand that is the result of an earlier op of the same expansion (a handler returning a
    list of Mapped: one ATen call written as several IR ops, e.g. einsum)."""
    index: int


def _scalar_or(v):
    if isinstance(v, Operand) or v is None:
        return v
    if isinstance(v, bool):
        return {"scalar": v}
    if isinstance(v, (int, float)):
        return {"scalar": v}
    return {"scalar": _jsonable(v)}


def _jsonable(v):
    """A JSON value for ``v``; non-finite floats become "inf", "-inf", "nan" (JSON has no literal
    for them; docs/problem-ir.md), at any depth of lists and dicts."""
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return str(v)
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    return str(v)


def _norm_dim(d: int, rank: int) -> int:
    if rank == 0:
        return 0
    return d + rank if d < 0 else d


def _norm_dims(dims, rank: int):
    if dims is None:
        return None
    if isinstance(dims, int):
        dims = [dims]
    dims = list(dims)
    if not dims:
        return None  # amax/amin/sum with dim=[] reduce over everything
    return sorted(_norm_dim(d, rank) for d in dims)


def _trim(inputs: List[Any]) -> List[Any]:
    while inputs and inputs[-1] is None:
        inputs.pop()
    return inputs


# ---------------------------------------------------------------------------------------------
# Handlers: each takes a Call and returns Mapped, a list of Mapped (an expansion into several IR
# ops, see Step), or None (not handled -> opaque).

def _elementwise_unary(name: str, attrs_fn: Optional[Callable[[Call], Dict[str, Any]]] = None):
    def h(c: Call) -> Mapped:
        attrs = attrs_fn(c) if attrs_fn else {}
        return Mapped(name, [c.args["self"]], attrs, UNARY_FLOPS[name] * c.out.numel)
    return h


def _binary(name: str, swap: bool = False):
    def h(c: Call) -> Mapped:
        a = c.args.get("self", c.args.get("input"))
        b = c.args.get("other", c.args.get("exponent"))
        inputs = [_scalar_or(a), _scalar_or(b)]
        if swap:
            inputs.reverse()
        attrs: Dict[str, Any] = {}
        if name in ("add", "sub"):
            alpha = c.args.get("alpha", 1)
            attrs["alpha"] = _jsonable(1 if alpha is None else alpha)
        if name == "div" and c.args.get("rounding_mode") is not None:
            attrs["rounding_mode"] = c.args["rounding_mode"]
        return Mapped(name, inputs, attrs, BINARY_FLOPS[name] * c.out.numel)
    return h


def _where(c: Call) -> Mapped:
    return Mapped("where", [c.args["condition"], _scalar_or(c.args["self"]), _scalar_or(c.args["other"])],
                  {}, c.out.numel)


def _clamp(c: Call) -> Mapped:
    lo = c.args.get("min")
    hi = c.args.get("max")
    if c.packet == "clamp_min":
        lo, hi = c.args.get("min"), None
    if c.packet == "clamp_max":
        lo, hi = None, c.args.get("max")
    if isinstance(lo, Operand) or isinstance(hi, Operand):
        # clamp with tensor bounds: maximum/minimum with tensors; keep as clamp with operands.
        return Mapped("clamp", [c.args["self"], lo, hi], {"min": None, "max": None}, c.out.numel)
    return Mapped("clamp", [c.args["self"]], {"min": _jsonable(lo), "max": _jsonable(hi)}, c.out.numel)


def _to(c: Call) -> Mapped:
    return Mapped("to", [c.args["self"]], {"dtype": DTYPE_NAMES.get(c.out.dtype, c.out.dtype)}, 0)


def _dropout(c: Call) -> Mapped:
    train = bool(c.args.get("train", False))
    return Mapped("dropout", [c.args["input"]], {"p": c.args.get("p", 0.5), "train": train},
                  c.out.numel if train else 0)


def _reduction(name: str):
    def h(c: Call) -> Mapped:
        if name in ("max", "min") and c.overload == "other":
            # torch.min(x, y) / torch.max(x, y) with a tensor: elementwise, not a reduction
            return _binary("minimum" if name == "min" else "maximum")(c)
        x = c.args["self"]
        rank = len(x.info.shape)
        dims = c.args.get("dim")
        if c.overload == "default" and name in ("max", "min", "sum", "mean", "prod"):
            dims = None
        attrs: Dict[str, Any] = {"dims": _norm_dims(dims, rank), "keepdim": bool(c.args.get("keepdim", False))}
        if name in ("var", "std"):
            if "correction" in c.args:
                corr = c.args.get("correction")
                attrs["correction"] = _jsonable(1 if corr is None else corr)
            else:
                attrs["correction"] = 1 if c.args.get("unbiased", True) else 0
        if name == "norm":
            p = c.args.get("ord", c.args.get("p", 2))
            attrs["p"] = _jsonable(2 if p is None else p)
        return Mapped(name, [x], attrs, REDUCTION_FLOPS[name] * x.info.numel)
    return h


def _row(name: str):
    def h(c: Call) -> Mapped:
        x = c.args.get("self", c.args.get("input"))
        rank = len(x.info.shape)
        attrs: Dict[str, Any] = {"dim": _norm_dim(c.args["dim"], rank)}
        if name in ("cumsum", "cumprod"):
            attrs.update(reverse=False, exclusive=False)
        return Mapped(name, [x], attrs, ROW_FLOPS[name] * x.info.numel)
    return h


def _layer_norm(c: Call) -> Mapped:
    x = c.args["input"]
    return Mapped("layer_norm", _trim([x, c.args.get("weight"), c.args.get("bias")]),
                  {"normalized_shape": list(c.args["normalized_shape"]), "eps": c.args.get("eps", 1e-5)},
                  8 * x.info.numel)


def _rms_norm(c: Call) -> Mapped:
    x = c.args["input"]
    return Mapped("rms_norm", _trim([x, c.args.get("weight")]),
                  {"normalized_shape": list(c.args["normalized_shape"]), "eps": c.args.get("eps")},
                  5 * x.info.numel)


def _group_norm(c: Call) -> Mapped:
    x = c.args["input"]
    return Mapped("group_norm", _trim([x, c.args.get("weight"), c.args.get("bias")]),
                  {"num_groups": c.args["num_groups"], "eps": c.args.get("eps", 1e-5)}, 8 * x.info.numel)


def _batch_norm(c: Call) -> Mapped:
    x = c.args["input"]
    return Mapped("batch_norm", _trim([x, c.args.get("running_mean"), c.args.get("running_var"),
                                       c.args.get("weight"), c.args.get("bias")]),
                  {"eps": c.args.get("eps"), "momentum": c.args.get("momentum"),
                   "training": bool(c.args.get("training"))}, 8 * x.info.numel)


def _instance_norm(c: Call) -> Mapped:
    x = c.args["input"]
    return Mapped("instance_norm", _trim([x, c.args.get("weight"), c.args.get("bias"),
                                          c.args.get("running_mean"), c.args.get("running_var")]),
                  {"eps": c.args.get("eps"), "use_input_stats": bool(c.args.get("use_input_stats", True))},
                  8 * x.info.numel)


def _loss(name: str, attr_names=()):
    def h(c: Call) -> Mapped:
        names = [n for n in ("self", "input", "x1", "anchor") if n in c.args]
        first = c.args[names[0]]
        operands = []
        for n in ("self", "input", "x1", "anchor", "target", "x2", "positive", "negative", "weight"):
            if n in c.args:
                operands.append(c.args[n])
        attrs: Dict[str, Any] = {}
        if "reduction" in c.args:
            attrs["reduction"] = REDUCTION_NAMES.get(c.args["reduction"], c.args["reduction"])
        for a in attr_names:
            if a in c.args:
                attrs[a] = _jsonable(c.args[a])
        return Mapped(name, _trim(operands), attrs, LOSS_FLOPS[name] * first.info.numel)
    return h


def _matmul(c: Call) -> Mapped:
    a, b = c.args["self"], c.args["other"]
    k = a.info.shape[-1]
    return Mapped("matmul", [a, b], {}, 2 * c.out.numel * k, "tensor")


def _mm(name: str):
    def h(c: Call) -> Mapped:
        a, b = c.args["self"], c.args["mat2"]
        k = a.info.shape[-1]
        return Mapped(name, [a, b], {}, 2 * c.out.numel * k, "tensor")
    return h


def _linear(c: Call) -> Mapped:
    x, w, bias = c.args["input"], c.args["weight"], c.args.get("bias")
    k = x.info.shape[-1]
    flops = 2 * c.out.numel * k + (c.out.numel if bias is not None else 0)
    return Mapped("linear", _trim([x, w, bias]), {}, flops, "tensor")


def _addmm(name: str):
    def h(c: Call) -> Mapped:
        cc, a, b = c.args["self"], c.args[_first(c, "mat1", "batch1")], c.args[_first(c, "mat2", "batch2")]
        k = a.info.shape[-1]
        flops = 2 * c.out.numel * k + 2 * c.out.numel
        return Mapped(name, [_scalar_or(cc), a, b],
                      {"alpha": _jsonable(c.args.get("alpha", 1)), "beta": _jsonable(c.args.get("beta", 1))},
                      flops, "tensor")
    return h


def _first(c: Call, *names: str) -> str:
    for n in names:
        if n in c.args:
            return n
    raise KeyError(names[0])


def _conv(c: Call) -> Optional[Mapped]:
    x, w, bias = c.args["input"], c.args["weight"], c.args.get("bias")
    nd = len(w.info.shape) - 2
    transposed = c.packet.startswith("conv_transpose") or bool(c.args.get("transposed", False))
    groups = c.args.get("groups", 1)
    kernel = math.prod(w.info.shape[2:])
    attrs = {"stride": _listify(c.args.get("stride", 1), nd), "padding": c.args.get("padding", 0),
             "dilation": _listify(c.args.get("dilation", 1), nd), "groups": groups}
    if isinstance(attrs["padding"], str):  # conv2d(padding="same")
        pass
    else:
        attrs["padding"] = _listify(attrs["padding"], nd)
    if transposed:
        attrs["output_padding"] = _listify(c.args.get("output_padding", 0), nd)
        flops = 2 * x.info.numel * w.info.shape[1] * kernel  # w: [C_in, C_out/groups, k...]
        op = f"conv_transpose{nd}d"
    else:
        flops = 2 * c.out.numel * w.info.shape[1] * kernel   # w: [C_out, C_in/groups, k...]
        op = f"conv{nd}d"
    if nd not in (1, 2, 3):
        return None
    return Mapped(op, _trim([x, w, bias]), attrs, flops, "tensor")


def _listify(v, n: int):
    if isinstance(v, (list, tuple)):
        v = list(v)
        return v * n if len(v) == 1 and n > 1 else v
    return [v] * n


def _sdpa(c: Call) -> Mapped:
    q, k, v = c.args["query"], c.args["key"], c.args["value"]
    mask = c.args.get("attn_mask")
    lq, dqk = q.info.shape[-2], q.info.shape[-1]
    lk, dv = k.info.shape[-2], v.info.shape[-1]
    batch = math.prod(q.info.shape[:-2])
    causal = bool(c.args.get("is_causal", False))
    flops = 2 * batch * lq * lk * (dqk + dv)
    if causal:
        flops //= 2
    attrs = {"is_causal": causal, "scale": c.args.get("scale")}
    if c.args.get("dropout_p"):
        attrs["dropout_p"] = c.args["dropout_p"]
    if c.args.get("enable_gqa"):
        attrs["enable_gqa"] = True
    return Mapped("sdpa", _trim([q, k, v, mask]), attrs, flops, "tensor")


# Pooling -------------------------------------------------------------------------------------

def _pool(kind: str, nd: int):
    """max_pool / avg_pool / adaptive_avg_pool over the last `nd` dims; every window attribute a
    list of `nd` (stride defaults to the window, as PyTorch's empty stride does)."""
    def h(c: Call) -> Mapped:
        x = c.args["self"]
        spatial = list(c.out.shape[-nd:])
        lead = math.prod(c.out.shape[:-nd])
        if kind == "adaptive_avg_pool":
            ins = list(x.info.shape[-nd:])
            window = 1  # summed window elements: PyTorch's windows [floor(i*I/O), ceil((i+1)*I/O))
            for i_n, o_n in zip(ins, spatial):
                window *= sum(-((-(o + 1) * i_n) // o_n) - (o * i_n) // o_n for o in range(o_n))
            return Mapped(kind, [x], {"output_size": spatial}, lead * window + c.out.numel)
        ks = _listify(_jsonable(c.args["kernel_size"]), nd)
        stride = _jsonable(c.args.get("stride") or [])
        attrs: Dict[str, Any] = {"kernel_size": ks, "stride": _listify(stride, nd) if stride else list(ks),
                                 "padding": _listify(_jsonable(c.args.get("padding", 0)), nd)}
        if kind == "max_pool":
            attrs["dilation"] = _listify(_jsonable(c.args.get("dilation", 1)), nd)
        attrs["ceil_mode"] = bool(c.args.get("ceil_mode", False))
        if kind == "avg_pool":
            attrs["count_include_pad"] = bool(c.args.get("count_include_pad", True))
            attrs["divisor_override"] = _jsonable(c.args.get("divisor_override"))
        return Mapped(kind, [x], attrs, c.out.numel * math.prod(ks) + (c.out.numel if kind == "avg_pool" else 0))
    return h


# Views and data movement --------------------------------------------------------------------

def _view(name: str, attr: Optional[str] = None, src: Optional[str] = None):
    def h(c: Call) -> Mapped:
        x = c.args["self"]
        attrs: Dict[str, Any] = {}
        if attr == "shape":
            attrs["shape"] = list(c.out.shape)
        elif attr is not None:
            attrs[attr] = _jsonable(c.args.get(src or attr))
        return Mapped(name, [x], attrs, 0)
    return h


def _permute(c: Call) -> Mapped:
    x = c.args["self"]
    return Mapped("permute", [x], {"dims": [_norm_dim(d, len(x.info.shape)) for d in c.args["dims"]]}, 0)


def _numpy_t(c: Call) -> Mapped:
    x = c.args["self"]
    r = len(x.info.shape)
    if r == 2:
        return Mapped("t", [x], {}, 0)
    return Mapped("permute", [x], {"dims": list(range(r - 1, -1, -1))}, 0)


def _transpose(c: Call) -> Mapped:
    x = c.args["self"]
    r = len(x.info.shape)
    if c.packet in ("mT", "adjoint"):
        d0, d1 = r - 2, r - 1
    else:
        d0, d1 = _norm_dim(c.args["dim0"], r), _norm_dim(c.args["dim1"], r)
    return Mapped("transpose", [x], {"dim0": min(d0, d1), "dim1": max(d0, d1)}, 0)


def _squeeze(c: Call) -> Mapped:
    x = c.args["self"]
    d = c.args.get("dim")
    if d is not None:
        d = _norm_dims(d, len(x.info.shape))
    return Mapped("squeeze", [x], {"dim": d}, 0)


def _unsqueeze(c: Call) -> Mapped:
    return Mapped("unsqueeze", [c.args["self"]], {"dim": _norm_dim(c.args["dim"], len(c.out.shape))}, 0)


def _flatten(c: Call) -> Mapped:
    x = c.args["self"]
    r = max(len(x.info.shape), 1)
    return Mapped("flatten", [x], {"start_dim": _norm_dim(c.args.get("start_dim", 0), r),
                                   "end_dim": _norm_dim(c.args.get("end_dim", -1), r)}, 0)


def _cat(name: str):
    def h(c: Call) -> Mapped:
        ts = list(c.args["tensors"])
        rank = len(c.out.shape)
        return Mapped(name, ts, {"dim": _norm_dim(c.args.get("dim", 0), rank)}, 0)
    return h


def _split(name: str):
    def h(c: Call) -> Mapped:
        x = c.args["self"]
        d = _norm_dim(c.args.get("dim", 0), len(x.info.shape))
        return Mapped(name, [x], {"dim": d, "sizes": [o.shape[d] for o in c.outs]}, 0)
    return h


def _slice(c: Call) -> Mapped:
    x = c.args["self"]
    d = _norm_dim(c.args.get("dim", 0), len(x.info.shape))
    n = x.info.shape[d]
    start, end, step = c.args.get("start"), c.args.get("end"), c.args.get("step", 1)
    start, end, step = slice(start, end, step).indices(n)
    return Mapped("slice", [x], {"dim": d, "start": start, "end": max(end, start), "step": step}, 0)


def _narrow(c: Call) -> Mapped:
    """x.narrow(dim, start, length) is x[..., start:start + length] along dim: a slice."""
    x = c.args["self"]
    d = _norm_dim(c.args["dim"], len(x.info.shape))
    n = x.info.shape[d]
    start = c.args["start"]
    if not isinstance(start, int):  # a 0-d tensor start: only its value at trace time is known
        start = int(start)
    start = start + n if start < 0 else start
    return Mapped("slice", [x], {"dim": d, "start": start, "end": start + int(c.args["length"]), "step": 1}, 0)


def _select(c: Call) -> Mapped:
    x = c.args["self"]
    d = _norm_dim(c.args["dim"], len(x.info.shape))
    idx = c.args["index"]
    if isinstance(idx, int) and idx < 0:
        idx += x.info.shape[d]
    return Mapped("select", [x], {"dim": d, "index": idx}, 0)


def _flip(c: Call) -> Mapped:
    x = c.args["self"]
    return Mapped("flip", [x], {"dims": _norm_dims(c.args["dims"], len(x.info.shape))}, 0)


def _pad(c: Call) -> Mapped:
    x = c.args["self"]
    attrs = {"pad": list(c.args["pad"]), "value": _jsonable(c.args.get("value") or 0)}
    mode = c.args.get("mode", "constant")
    if mode not in (None, "constant"):
        attrs["mode"] = mode
    return Mapped("pad", [x], attrs, 0)


def _masked_fill(c: Call) -> Mapped:
    return Mapped("masked_fill", [c.args["self"], c.args["mask"], _scalar_or(c.args["value"])], {}, 0)


def _trilu(name: str):
    def h(c: Call) -> Mapped:
        return Mapped(name, [c.args["self"]], {"diagonal": c.args.get("diagonal", 0)}, 0)
    return h


def _gather(name: str):
    def h(c: Call) -> Mapped:
        x = c.args["self"]
        return Mapped(name, [x, c.args["index"]], {"dim": _norm_dim(c.args["dim"], len(x.info.shape))}, 0)
    return h


def _expand(c: Call) -> Mapped:
    return Mapped("expand", [c.args["self"]], {"shape": list(c.out.shape)}, 0)


def _einsum(c: Call) -> List[Mapped]:
    from .einsum import expand  # einsum.py builds on this module's classes

    return expand(c)


# Table: ATen packet name -> handler. Overload-specific behaviour lives inside the handlers.
HANDLERS: Dict[str, Callable[[Call], Any]] = {
    # matmul family
    "matmul": _matmul, "mm": _mm("mm"), "bmm": _mm("bmm"), "linear": _linear,
    "addmm": _addmm("addmm"), "baddbmm": _addmm("baddbmm"),
    "conv1d": _conv, "conv2d": _conv, "conv3d": _conv, "conv_transpose1d": _conv,
    "conv_transpose2d": _conv, "conv_transpose3d": _conv, "convolution": _conv, "_convolution": _conv,
    "scaled_dot_product_attention": _sdpa,
    # pooling (return_indices=True, max_pool*_with_indices, stays opaque)
    **{f"{k}{n}d": _pool(k, n) for k in ("max_pool", "avg_pool", "adaptive_avg_pool") for n in (1, 2, 3)},
    # elementwise binary
    "add": _binary("add"), "sub": _binary("sub"), "mul": _binary("mul"), "div": _binary("div"),
    "true_divide": _binary("div"), "pow": _binary("pow"), "maximum": _binary("maximum"),
    "minimum": _binary("minimum"), "rsub": _binary("sub", swap=True),
    "eq": _binary("eq"), "ne": _binary("ne"), "lt": _binary("lt"), "le": _binary("le"),
    "gt": _binary("gt"), "ge": _binary("ge"), "where": _where,
    # elementwise unary
    "leaky_relu": _elementwise_unary("leaky_relu", lambda c: {"negative_slope": c.args.get("negative_slope", 0.01)}),
    "gelu": _elementwise_unary("gelu", lambda c: {"approximate": c.args.get("approximate", "none")}),
    "softplus": _elementwise_unary("softplus", lambda c: {"beta": c.args.get("beta", 1), "threshold": c.args.get("threshold", 20)}),
    "elu": _elementwise_unary("elu", lambda c: {"alpha": c.args.get("alpha", 1)}),
    "celu": _elementwise_unary("celu", lambda c: {"alpha": c.args.get("alpha", 1)}),
    "hardtanh": _elementwise_unary("hardtanh", lambda c: {"min_val": c.args.get("min_val", -1), "max_val": c.args.get("max_val", 1)}),
    "clamp": _clamp, "clip": _clamp, "clamp_min": _clamp, "clamp_max": _clamp,
    "to": _to, "_to_copy": _to, "type_as": _to, "dropout": _dropout,
    # reductions
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "amax": _reduction("amax"), "amin": _reduction("amin"), "max": _reduction("max"),
    "min": _reduction("min"), "argmax": _reduction("argmax"), "argmin": _reduction("argmin"),
    "logsumexp": _reduction("logsumexp"), "var": _reduction("var"), "std": _reduction("std"),
    "norm": _reduction("norm"), "linalg_vector_norm": _reduction("norm"),
    "softmax": _row("softmax"), "_softmax": _row("softmax"), "log_softmax": _row("log_softmax"),
    "_log_softmax": _row("log_softmax"), "cumsum": _row("cumsum"), "cumprod": _row("cumprod"),
    "layer_norm": _layer_norm, "rms_norm": _rms_norm, "group_norm": _group_norm,
    "batch_norm": _batch_norm, "instance_norm": _instance_norm,
    # losses
    "mse_loss": _loss("mse_loss"), "l1_loss": _loss("l1_loss"),
    "smooth_l1_loss": _loss("smooth_l1_loss", ("beta",)), "huber_loss": _loss("huber_loss", ("delta",)),
    "kl_div": _loss("kl_div", ("log_target",)),
    "cross_entropy_loss": _loss("cross_entropy", ("ignore_index", "label_smoothing")),
    "nll_loss": _loss("nll_loss", ("ignore_index",)), "nll_loss_nd": _loss("nll_loss", ("ignore_index",)),
    "nll_loss2d": _loss("nll_loss", ("ignore_index",)),
    "hinge_embedding_loss": _loss("hinge_embedding_loss", ("margin",)),
    "cosine_similarity": _loss("cosine_similarity", ("dim", "eps")),
    "triplet_margin_loss": _loss("triplet_margin_loss", ("margin", "p", "eps", "swap")),
    # views and data movement
    "view": _view("view", "shape"), "reshape": _view("reshape", "shape"), "_unsafe_view": _view("view", "shape"),
    "view_as": _view("view", "shape"), "reshape_as": _view("reshape", "shape"),
    "permute": _permute, "transpose": _transpose, "swapaxes": _transpose, "mT": _transpose,
    "t": _view("t"), "numpy_T": _numpy_t,
    "expand": _expand, "expand_as": _expand, "squeeze": _squeeze, "unsqueeze": _unsqueeze,
    "flatten": _flatten, "contiguous": _view("contiguous"), "clone": _view("clone"),
    "cat": _cat("cat"), "concat": _cat("cat"), "concatenate": _cat("cat"), "stack": _cat("stack"),
    "split": _split("split"), "split_with_sizes": _split("split"), "chunk": _split("chunk"),
    "slice": _slice, "narrow": _narrow, "select": _select, "flip": _flip, "pad": _pad, "constant_pad_nd": _pad,
    "masked_fill": _masked_fill, "tril": _trilu("tril"), "triu": _trilu("triu"),
    "gather": _gather("gather"), "index_select": _gather("index_select"),
}
for _u in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "sin", "cos", "tanh",
           "sigmoid", "relu", "relu6", "silu", "mish", "selu", "softsign", "hardswish", "hardsigmoid",
           "log_sigmoid", "erf", "sign", "floor", "ceil", "round", "bitwise_not"):
    HANDLERS.setdefault(_u, _elementwise_unary(_u))
HANDLERS["logical_not"] = _elementwise_unary("bitwise_not")  # on bool (`~mask`), the same op
HANDLERS["negative"] = _elementwise_unary("neg")
HANDLERS["einsum"] = _einsum
HANDLERS["absolute"] = _elementwise_unary("abs")

# Operators that are the identity for our purposes: their output takes the input's name.
# detach_ too: torch.tensor([...]) in forward is lift_fresh_copy then detach_, which changes no value.
IDENTITY_OPS = {"alias", "detach", "detach_", "lift_fresh_copy", "lift_fresh", "_assert_tensor_metadata",
                "_assert_scalar", "_assert_async", "sym_constrain_range_for_size", "feature_dropout",
                "alpha_dropout", "feature_alpha_dropout"}
# Factories whose value is a known fill: they become `constant` tensors, not ops.
FILL_FACTORIES = {"zeros": 0, "ones": 1, "zeros_like": 0, "ones_like": 1, "full": None, "full_like": None,
                  "new_zeros": 0, "new_ones": 1, "new_full": None, "scalar_tensor": None}

# torch dtype name -> IR dtype name (docs/problem-ir.md). Anything else is rejected.
DTYPE_NAMES = {
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool",
}
