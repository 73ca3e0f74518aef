"""Torch stages: the PyTorch operations a kernel library hands back to its host (docs/language.md,
"torch stages"; docs/kernel-abi.md, ``ucut_set_host``).

A program keeps an operation outside the language as a ``torch`` stage, the way torch.compile
breaks its graph: the library runs its kernels in order and, at a torch stage, calls the host,
which runs that stage's Problem IR operations (docs/problem-ir.md) with PyTorch on the same stream
and writes the results into the stage's output tensors (the library's own buffers: outputs, or
tmp tensors at their workspace offsets).

This module turns a library's ``ucut_describe()["torch_stages"]`` into plain Python source, one
function per stage, calling ``torch`` and ``torch.nn.functional`` directly. The worker executes
that source (:class:`Host`); ``ucutlass export`` embeds the same source in model_new.py, so the
exported file needs nothing but torch. :data:`OPS` implements every operation of the language's
torch vocabulary (src/dsl/torch_ops.def; python/tests/test_torch_stages.py checks both lists
agree and that each operation computes what the traced PyTorch call did).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

# IR dtype names (docs/problem-ir.md) -> torch dtype expressions in generated code.
_DTYPE_CODE = {"f16": "torch.float16", "bf16": "torch.bfloat16", "f32": "torch.float32",
               "f64": "torch.float64", "i8": "torch.int8", "i16": "torch.int16", "i32": "torch.int32",
               "i64": "torch.int64", "u8": "torch.uint8", "bool": "torch.bool"}
_TORCH_DTYPES = {k: eval(v, {"torch": torch}) for k, v in _DTYPE_CODE.items()}  # noqa: S307 - fixed table


class TorchStageError(Exception):
    """A torch stage could not run: names the stage, the operation and why."""


def _lit(v: Any) -> str:
    """A Python literal for an attribute or scalar operand value (non-finite numbers arrive as the
    strings "inf", "-inf", "nan": JSON has no literal for them)."""
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return f"float({v!r})"
    if isinstance(v, float) and not math.isfinite(v):
        return f"float({str(v)!r})"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_lit(x) for x in v) + "]"
    return repr(v)


def _num(v: Any) -> Any:
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    return v


def _dims(at: Dict[str, Any], key: str = "dims") -> Optional[List[int]]:
    d = at.get(key)
    if d is None:
        return None
    return [int(x) for x in (d if isinstance(d, list) else [d])]


def _reduce(fn: str, x: str, at: Dict[str, Any], extra: str = "") -> str:
    dims = _dims(at)
    keep = bool(at.get("keepdim", False))
    if dims is None:
        if keep:
            return f"{fn}({x}, dim=tuple(range({x}.dim())), keepdim=True{extra})"
        return f"{fn}({x}{extra})"
    return f"{fn}({x}, dim={dims!r}, keepdim={keep!r}{extra})"


def _one_dim_reduce(fn: str, x: str, at: Dict[str, Any]) -> str:
    """Reductions PyTorch takes over one dim at most (prod, argmax, argmin, max/min with indices)."""
    dims = _dims(at)
    keep = bool(at.get("keepdim", False))
    if dims is None:
        return f"{fn}({x})"
    if len(dims) != 1:
        raise TorchStageError(f"{fn} reduces over one dim, got dims={dims}")
    return f"{fn}({x}, dim={dims[0]}, keepdim={keep!r})"


def _binary_op(sym: str) -> Callable[[List[str], Dict[str, Any]], str]:
    return lambda a, at: f"({a[0]} {sym} {a[1]})"


def _add_sub(sym: str, fn: str) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        alpha = _num(at.get("alpha", 1))
        if alpha == 1:
            return f"({a[0]} {sym} {a[1]})"
        return f"({a[0]} {sym} {_lit(alpha)} * {a[1]})"
    return code


def _div(a: List[str], at: Dict[str, Any]) -> str:
    mode = at.get("rounding_mode")
    if mode:
        return f"torch.div({a[0]}, {a[1]}, rounding_mode={mode!r})"
    return f"({a[0]} / {a[1]})"


def _cum(fn: str) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        d = int(at.get("dim", 0))
        x = a[0]
        if at.get("reverse"):
            body = f"torch.flip(torch.{fn}(torch.flip({x}, [{d}]), {d}), [{d}])"
        else:
            body = f"torch.{fn}({x}, {d})"
        if at.get("exclusive"):
            body = f"({body} - {x})" if fn == "cumsum" else f"({body} / {x})"
        return body
    return code


def _opt(a: List[str], i: int) -> str:
    return a[i] if i < len(a) else "None"


def _conv(nd: int, transposed: bool) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        pad = at.get("padding", 0)
        common = f"stride={_lit(at.get('stride', 1))}, padding={_lit(pad)}, dilation={_lit(at.get('dilation', 1))}, groups={_lit(at.get('groups', 1))}"
        if transposed:
            return (f"F.conv_transpose{nd}d({a[0]}, {a[1]}, {_opt(a, 2)}, stride={_lit(at.get('stride', 1))}, "
                    f"padding={_lit(pad)}, output_padding={_lit(at.get('output_padding', 0))}, "
                    f"groups={_lit(at.get('groups', 1))}, dilation={_lit(at.get('dilation', 1))})")
        return f"F.conv{nd}d({a[0]}, {a[1]}, {_opt(a, 2)}, {common})"
    return code


def _sdpa(a: List[str], at: Dict[str, Any]) -> str:
    kw = f"attn_mask={_opt(a, 3)}, dropout_p={_lit(at.get('dropout_p', 0.0))}, is_causal={bool(at.get('is_causal', False))!r}"
    if at.get("scale") is not None:
        kw += f", scale={_lit(at['scale'])}"
    if at.get("enable_gqa"):
        kw += ", enable_gqa=True"
    return f"F.scaled_dot_product_attention({a[0]}, {a[1]}, {a[2]}, {kw})"


def _clamp(a: List[str], at: Dict[str, Any]) -> str:
    if len(a) > 1:  # tensor bounds
        return f"torch.clamp({a[0]}, min={_opt(a, 1)}, max={_opt(a, 2)})"
    return f"torch.clamp({a[0]}, min={_lit(_num(at.get('min')))}, max={_lit(_num(at.get('max')))})"


def _slice(a: List[str], at: Dict[str, Any]) -> str:
    d = int(at.get("dim", 0))
    start, end, step = at.get("start", 0), at.get("end"), at.get("step", 1)
    return f"{a[0]}[{'(slice(None),) * ' + str(d) + ' + ' if d else ''}(slice({start!r}, {end!r}, {step!r}),)]"


def _pad(a: List[str], at: Dict[str, Any]) -> str:
    mode = at.get("mode", "constant")
    if mode == "constant":
        return f"F.pad({a[0]}, {_lit(at.get('pad', []))}, value={_lit(_num(at.get('value', 0)))})"
    return f"F.pad({a[0]}, {_lit(at.get('pad', []))}, mode={mode!r})"


def _loss(fn: str, keys: Sequence[str]) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        kw = [f"{k}={_lit(_num(at[k]))}" for k in keys if k in at and at[k] is not None]
        if "reduction" in at:
            kw.append(f"reduction={at['reduction']!r}")
        return f"F.{fn}({', '.join(a + kw)})"
    return code


def _cross_entropy(fn: str) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        kw = [f"weight={_opt(a, 2)}"]
        for k in ("ignore_index", "label_smoothing"):
            if k in at and at[k] is not None and not (fn == "nll_loss" and k == "label_smoothing"):
                kw.append(f"{k}={_lit(at[k])}")
        if "reduction" in at:
            kw.append(f"reduction={at['reduction']!r}")
        return f"F.{fn}({a[0]}, {a[1]}, {', '.join(kw)})"
    return code


def _norm(a: List[str], at: Dict[str, Any]) -> str:
    p = at.get("p", 2)
    p = 2 if p == "fro" else _num(p)
    return _reduce("torch.linalg.vector_norm", a[0], at, f", ord={_lit(p)}")


def _var_std(fn: str) -> Callable[[List[str], Dict[str, Any]], str]:
    return lambda a, at: _reduce(f"torch.{fn}", a[0], at, f", correction={_lit(at.get('correction', 1))}")


def _max_min(fn: str) -> Callable[[List[str], Dict[str, Any]], str]:
    def code(a: List[str], at: Dict[str, Any]) -> str:
        if _dims(at) is None:
            return f"torch.{fn}({a[0]})"
        return "tuple(" + _one_dim_reduce(f"torch.{fn}", a[0], at) + ")"
    return code


def _pool(kind: str) -> Callable[[List[str], Dict[str, Any]], str]:
    """F.max_poolNd / F.avg_poolNd / F.adaptive_avg_poolNd, N the length of the window lists."""
    def code(a: List[str], at: Dict[str, Any]) -> str:
        if kind == "adaptive_avg_pool":
            return f"F.adaptive_avg_pool{len(at['output_size'])}d({a[0]}, {_lit(at['output_size'])})"
        nd = len(at["kernel_size"])
        kw = (f"{_lit(at['kernel_size'])}, stride={_lit(at.get('stride') or at['kernel_size'])}, "
              f"padding={_lit(at.get('padding', 0))}, ceil_mode={bool(at.get('ceil_mode', False))!r}")
        if kind == "max_pool":
            return f"F.max_pool{nd}d({a[0]}, {kw}, dilation={_lit(at.get('dilation', 1))})"
        kw += f", count_include_pad={bool(at.get('count_include_pad', True))!r}"
        if at.get("divisor_override") is not None:  # avg_pool1d has no divisor_override
            kw += f", divisor_override={int(at['divisor_override'])}"
        return f"F.avg_pool{nd}d({a[0]}, {kw})"
    return code


def _dropout(a: List[str], at: Dict[str, Any]) -> str:
    if at.get("train") or at.get("training"):
        return f"F.dropout({a[0]}, p={_lit(at.get('p', 0.5))}, training=True)"
    return a[0]


# IR operation -> code for its value, given its operands' code and its attributes.
OPS: Dict[str, Callable[[List[str], Dict[str, Any]], str]] = {
    # matmul family and convolutions
    "matmul": lambda a, at: f"torch.matmul({a[0]}, {a[1]})",
    "mm": lambda a, at: f"torch.mm({a[0]}, {a[1]})",
    "bmm": lambda a, at: f"torch.bmm({a[0]}, {a[1]})",
    "linear": lambda a, at: f"F.linear({a[0]}, {a[1]}, {_opt(a, 2)})",
    "addmm": lambda a, at: f"torch.addmm({a[0]}, {a[1]}, {a[2]}, beta={_lit(at.get('beta', 1))}, alpha={_lit(at.get('alpha', 1))})",
    "baddbmm": lambda a, at: f"torch.baddbmm({a[0]}, {a[1]}, {a[2]}, beta={_lit(at.get('beta', 1))}, alpha={_lit(at.get('alpha', 1))})",
    "conv1d": _conv(1, False), "conv2d": _conv(2, False), "conv3d": _conv(3, False),
    "conv_transpose1d": _conv(1, True), "conv_transpose2d": _conv(2, True), "conv_transpose3d": _conv(3, True),
    "sdpa": _sdpa,
    # pooling
    "max_pool": _pool("max_pool"), "avg_pool": _pool("avg_pool"), "adaptive_avg_pool": _pool("adaptive_avg_pool"),
    # elementwise, binary and selection
    "add": _add_sub("+", "add"), "sub": _add_sub("-", "sub"), "mul": _binary_op("*"), "div": _div,
    "pow": lambda a, at: f"torch.pow({a[0]}, {a[1]})",
    "maximum": lambda a, at: f"torch.maximum({a[0]}, {a[1]})",
    "minimum": lambda a, at: f"torch.minimum({a[0]}, {a[1]})",
    "where": lambda a, at: f"torch.where({a[0]}, {a[1]}, {a[2]})",
    "eq": _binary_op("=="), "ne": _binary_op("!="), "lt": _binary_op("<"), "le": _binary_op("<="),
    "gt": _binary_op(">"), "ge": _binary_op(">="),
    "masked_fill": lambda a, at: f"torch.masked_fill({a[0]}, {a[1]}, {a[2] if len(a) > 2 else _lit(_num(at.get('value', 0)))})",
    # elementwise, unary
    "neg": lambda a, at: f"torch.neg({a[0]})", "abs": lambda a, at: f"torch.abs({a[0]})",
    "exp": lambda a, at: f"torch.exp({a[0]})", "log": lambda a, at: f"torch.log({a[0]})",
    "sqrt": lambda a, at: f"torch.sqrt({a[0]})", "rsqrt": lambda a, at: f"torch.rsqrt({a[0]})",
    "reciprocal": lambda a, at: f"torch.reciprocal({a[0]})", "square": lambda a, at: f"torch.square({a[0]})",
    "sin": lambda a, at: f"torch.sin({a[0]})", "cos": lambda a, at: f"torch.cos({a[0]})",
    "tanh": lambda a, at: f"torch.tanh({a[0]})", "sigmoid": lambda a, at: f"torch.sigmoid({a[0]})",
    "relu": lambda a, at: f"torch.relu({a[0]})", "relu6": lambda a, at: f"F.relu6({a[0]})",
    "leaky_relu": lambda a, at: f"F.leaky_relu({a[0]}, {_lit(at.get('negative_slope', 0.01))})",
    "gelu": lambda a, at: f"F.gelu({a[0]}, approximate={at.get('approximate', 'none')!r})",
    "silu": lambda a, at: f"F.silu({a[0]})", "mish": lambda a, at: f"F.mish({a[0]})",
    "softplus": lambda a, at: f"F.softplus({a[0]}, beta={_lit(at.get('beta', 1))}, threshold={_lit(at.get('threshold', 20))})",
    "elu": lambda a, at: f"F.elu({a[0]}, alpha={_lit(at.get('alpha', 1))})",
    "selu": lambda a, at: f"F.selu({a[0]})",
    "celu": lambda a, at: f"F.celu({a[0]}, alpha={_lit(at.get('alpha', 1))})",
    "softsign": lambda a, at: f"F.softsign({a[0]})",
    "hardtanh": lambda a, at: f"F.hardtanh({a[0]}, {_lit(at.get('min_val', -1))}, {_lit(at.get('max_val', 1))})",
    "clamp": _clamp,
    "hardswish": lambda a, at: f"F.hardswish({a[0]})", "hardsigmoid": lambda a, at: f"F.hardsigmoid({a[0]})",
    "log_sigmoid": lambda a, at: f"F.logsigmoid({a[0]})", "erf": lambda a, at: f"torch.erf({a[0]})",
    "sign": lambda a, at: f"torch.sign({a[0]})", "floor": lambda a, at: f"torch.floor({a[0]})",
    "ceil": lambda a, at: f"torch.ceil({a[0]})", "round": lambda a, at: f"torch.round({a[0]})",
    "bitwise_not": lambda a, at: f"torch.bitwise_not({a[0]})",
    "to": lambda a, at: f"{a[0]}.to({_DTYPE_CODE[at['dtype']]})",
    "dropout": _dropout,
    # reductions, row operations and norms
    "sum": lambda a, at: _reduce("torch.sum", a[0], at),
    "mean": lambda a, at: _reduce("torch.mean", a[0], at),
    "prod": lambda a, at: _one_dim_reduce("torch.prod", a[0], at),
    "amax": lambda a, at: _reduce("torch.amax", a[0], at) if _dims(at) is not None else f"torch.amax({a[0]}, dim=tuple(range({a[0]}.dim())), keepdim={bool(at.get('keepdim', False))!r})",
    "amin": lambda a, at: _reduce("torch.amin", a[0], at) if _dims(at) is not None else f"torch.amin({a[0]}, dim=tuple(range({a[0]}.dim())), keepdim={bool(at.get('keepdim', False))!r})",
    "max": _max_min("max"), "min": _max_min("min"),
    "argmax": lambda a, at: _one_dim_reduce("torch.argmax", a[0], at),
    "argmin": lambda a, at: _one_dim_reduce("torch.argmin", a[0], at),
    "logsumexp": lambda a, at: _reduce("torch.logsumexp", a[0], at) if _dims(at) is not None else f"torch.logsumexp({a[0]}, dim=tuple(range({a[0]}.dim())), keepdim={bool(at.get('keepdim', False))!r})",
    "var": _var_std("var"), "std": _var_std("std"), "norm": _norm,
    "softmax": lambda a, at: f"torch.softmax({a[0]}, {int(at.get('dim', -1))})",
    "log_softmax": lambda a, at: f"torch.log_softmax({a[0]}, {int(at.get('dim', -1))})",
    "layer_norm": lambda a, at: f"F.layer_norm({a[0]}, {_lit(at.get('normalized_shape'))}, {_opt(a, 1)}, {_opt(a, 2)}, {_lit(at.get('eps', 1e-5))})",
    "rms_norm": lambda a, at: f"F.rms_norm({a[0]}, {_lit(at.get('normalized_shape'))}, {_opt(a, 1)}, {_lit(at.get('eps'))})",
    "group_norm": lambda a, at: f"F.group_norm({a[0]}, {int(at['num_groups'])}, {_opt(a, 1)}, {_opt(a, 2)}, {_lit(at.get('eps', 1e-5))})",
    "batch_norm": lambda a, at: f"F.batch_norm({a[0]}, {a[1]}, {a[2]}, {_opt(a, 3)}, {_opt(a, 4)}, {bool(at.get('training', False))!r}, {_lit(at.get('momentum') or 0.1)}, {_lit(at.get('eps', 1e-5))})",
    "instance_norm": lambda a, at: f"F.instance_norm({a[0]}, running_mean={_opt(a, 3)}, running_var={_opt(a, 4)}, weight={_opt(a, 1)}, bias={_opt(a, 2)}, use_input_stats={bool(at.get('use_input_stats', True))!r}, eps={_lit(at.get('eps', 1e-5))})",
    "cumsum": _cum("cumsum"), "cumprod": _cum("cumprod"),
    # losses
    "mse_loss": _loss("mse_loss", ()), "l1_loss": _loss("l1_loss", ()),
    "smooth_l1_loss": _loss("smooth_l1_loss", ("beta",)), "huber_loss": _loss("huber_loss", ("delta",)),
    "kl_div": _loss("kl_div", ("log_target",)),
    "cross_entropy": _cross_entropy("cross_entropy"), "nll_loss": _cross_entropy("nll_loss"),
    "hinge_embedding_loss": _loss("hinge_embedding_loss", ("margin",)),
    "cosine_similarity": lambda a, at: f"F.cosine_similarity({a[0]}, {a[1]}, dim={int(at.get('dim', 1))}, eps={_lit(at.get('eps', 1e-8))})",
    "triplet_margin_loss": _loss("triplet_margin_loss", ("margin", "p", "eps", "swap")),
    "full": lambda a, at: f"torch.full({_lit(at['shape'])}, {_lit(_num(at.get('value', 0)))}, dtype={_DTYPE_CODE[at.get('dtype', 'f32')]}, device=_dev)",
    # views and data movement
    "view": lambda a, at: f"{a[0]}.reshape({_lit(at['shape'])})",
    "reshape": lambda a, at: f"{a[0]}.reshape({_lit(at['shape'])})",
    "permute": lambda a, at: f"{a[0]}.permute({_lit(at['dims'])})",
    "transpose": lambda a, at: f"{a[0]}.transpose({int(at.get('dim0', 0))}, {int(at.get('dim1', 1))})",
    "t": lambda a, at: f"{a[0]}.t()",
    "expand": lambda a, at: f"{a[0]}.expand({_lit(at['shape'])})",
    "squeeze": lambda a, at: f"{a[0]}.squeeze({_lit(tuple(_dims(at, 'dim')))})" if _dims(at, "dim") is not None else f"{a[0]}.squeeze()",
    "unsqueeze": lambda a, at: f"{a[0]}.unsqueeze({int(at['dim'])})",
    "flatten": lambda a, at: f"torch.flatten({a[0]}, {int(at.get('start_dim', 0))}, {int(at.get('end_dim', -1))})",
    "contiguous": lambda a, at: f"{a[0]}.contiguous()",
    "clone": lambda a, at: f"{a[0]}.clone()",
    "cat": lambda a, at: f"torch.cat([{', '.join(a)}], {int(at.get('dim', 0))})",
    "stack": lambda a, at: f"torch.stack([{', '.join(a)}], {int(at.get('dim', 0))})",
    "split": lambda a, at: f"torch.split({a[0]}, {_lit(at['sizes'])}, {int(at.get('dim', 0))})",
    "chunk": lambda a, at: f"torch.split({a[0]}, {_lit(at['sizes'])}, {int(at.get('dim', 0))})",
    "slice": _slice,
    "select": lambda a, at: f"{a[0]}.select({int(at['dim'])}, {int(at['index'])})",
    "flip": lambda a, at: f"torch.flip({a[0]}, {_lit(_dims(at))})",
    "pad": _pad,
    "tril": lambda a, at: f"torch.tril({a[0]}, {int(at.get('diagonal', 0))})",
    "triu": lambda a, at: f"torch.triu({a[0]}, {int(at.get('diagonal', 0))})",
    "gather": lambda a, at: f"torch.gather({a[0]}, {int(at['dim'])}, {a[1]})",
    "index_select": lambda a, at: f"torch.index_select({a[0]}, {int(at['dim'])}, {a[1]})",
}

# Shared by every generated file: the store into a stage output (dtype exact, shape by element
# count: a program may declare an output flattened) and the names the functions use.
PRELUDE = '''import torch
import torch.nn.functional as F


def _ucut_store(t, name, value, stage):
    dst = t[name]
    if not isinstance(value, torch.Tensor):
        value = torch.as_tensor(value, device=dst.device)
    if value.dtype != dst.dtype:
        raise RuntimeError("torch stage %s: '%s' is %s, the program declares %s" % (stage, name, value.dtype, dst.dtype))
    if tuple(value.shape) != tuple(dst.shape):
        if value.numel() != dst.numel():
            raise RuntimeError("torch stage %s: '%s' has shape %s, the program declares %s"
                               % (stage, name, list(value.shape), list(dst.shape)))
        value = value.reshape(dst.shape)
    dst.copy_(value)
'''


def operand_code(o: Any) -> str:
    if isinstance(o, dict) and "scalar" in o:
        return _lit(o["scalar"])
    if o is None:
        return "None"
    return f"L[{o!r}]"


def stage_source(stage: Dict[str, Any]) -> str:
    """Python source of one torch stage's function ``_ucut_torch_stage_<index>(t)``: ``t`` maps the
    stage's declared tensors to torch tensors; locals live in ``L``."""
    idx = int(stage["stage"])
    label = stage.get("name", str(idx))
    lines = [f"def _ucut_torch_stage_{idx}(t):", f"    # torch stage '{label}'", "    L = dict(t)",
             "    _dev = next(iter(t.values())).device"]
    for op in stage["ops"]:
        name = op["op"]
        if name not in OPS:
            raise TorchStageError(f"torch stage '{label}': operation '{name}' has no PyTorch implementation here")
        args = [operand_code(o) for o in op.get("inputs", [])]
        code = OPS[name](args, dict(op.get("attrs", {})))
        outs = op["outputs"]
        local = op.get("local", [True] * len(outs))
        if len(outs) == 1:
            lines.append(f"    _v = {code}")
            values = ["_v"]
        else:
            lines.append(f"    _v = tuple({code})")
            lines.append(f"    if len(_v) != {len(outs)}:")
            lines.append(f"        raise RuntimeError('torch stage {label}: {name} gave %d results, the program names {len(outs)}' % len(_v))")
            values = [f"_v[{i}]" for i in range(len(outs))]
        for out, is_local, v in zip(outs, local, values):
            if is_local:
                lines.append(f"    L[{out!r}] = {v}")
            else:
                lines.append(f"    _ucut_store(t, {out!r}, {v}, {label!r})")
    lines.append("    return L")
    return "\n".join(lines) + "\n"


def library_source(describe: Dict[str, Any]) -> str:
    """The prelude and every torch stage function of a library, with ``TORCH_STAGES`` mapping each
    stage index to its function. Empty when the library has no torch stage."""
    stages = describe.get("torch_stages") or []
    if not stages:
        return ""
    body = [PRELUDE] + [stage_source(s) for s in stages]
    body.append("TORCH_STAGES = {" + ", ".join(f"{int(s['stage'])}: _ucut_torch_stage_{int(s['stage'])}"
                                              for s in stages) + "}\n")
    return "\n\n".join(body)


def stage_tensors(stage: Dict[str, Any], abi: Sequence[torch.Tensor], workspace: Optional[torch.Tensor]) -> Dict[str, torch.Tensor]:
    """The declared tensors a stage touches: ABI tensors by position, tmp tensors as views of the
    workspace at their offsets."""
    out: Dict[str, torch.Tensor] = {}
    for name, loc in stage.get("tensors", {}).items():
        if "arg" in loc:
            out[name] = abi[int(loc["arg"])]
            continue
        if workspace is None:
            raise TorchStageError(f"torch stage '{stage.get('name')}': tmp '{name}' needs the workspace")
        dt = _TORCH_DTYPES[loc["dtype"]]
        n = math.prod(loc["shape"])
        off = int(loc["offset"])
        nbytes = n * torch.empty((), dtype=dt).element_size()
        out[name] = workspace[off:off + nbytes].view(dt).view(loc["shape"])
    return out


class Host:
    """Runs a library's torch stages when it calls back (kernel.CtypesKernel registers
    :meth:`run` through ``ucut_set_host``). ``bind`` gives it the tensors of the call in flight."""

    def __init__(self, describe: Dict[str, Any]):
        self.stages = {int(s["stage"]): s for s in describe.get("torch_stages") or []}
        ns: Dict[str, Any] = {}
        src = library_source(describe)
        if src:
            exec(compile(src, "<ucutlass torch stages>", "exec"), ns)  # noqa: S102 - generated from the describe table
        self.functions = ns.get("TORCH_STAGES", {})
        self.abi: Sequence[torch.Tensor] = ()
        self.workspace: Optional[torch.Tensor] = None
        self.error = ""

    def bind(self, abi: Sequence[torch.Tensor], workspace: Optional[torch.Tensor]) -> None:
        self.abi = list(abi)
        self.workspace = workspace

    def run(self, stage: int) -> int:
        """The callback: 0 on success; otherwise keeps the message in ``error`` and returns 1."""
        try:
            fn = self.functions[stage]
            with torch.no_grad():
                fn(stage_tensors(self.stages[stage], self.abi, self.workspace))
            return 0
        except Exception as e:  # noqa: BLE001 - reported through the library's error code
            self.error = f"torch stage '{self.stages.get(stage, {}).get('name', stage)}': {type(e).__name__}: {e}"
            return 1
