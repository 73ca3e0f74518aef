"""Problem IR extraction: a KernelBench-format file -> problem.json (schema ucutlass.problem/1).

    python -m ucutlass_torch.extract problem.py -o problem.json
    python -m ucutlass_torch.extract problems/ -o out_dir/        (one JSON per problem)

How (docs/problem-ir.md, "How extraction works"):
1. loader.load_problem executes the file in an isolated module.
2. Model(*get_init_inputs()) and get_inputs() run inside a FakeTensorMode: torch.randn, nn.Linear's
   weights and every other tensor they create are fake (shape, dtype and device, no storage), so a
   problem sized for an H200 (tens of GB) costs nothing here. Real tensors that slip through (e.g.
   torch.from_numpy) are converted to fake ones.
3. torch.export.export(strict=False) traces forward at pre-dispatch ATen granularity (aten.linear,
   aten.layer_norm, aten.scaled_dot_product_attention survive as such), under torch.no_grad().
   Steps 2-3 import torch._dynamo (~2 s), so by default fasttrace.py first records the same graph
   on meta tensors with a mode at the PreDispatch key, without torch._dynamo; whenever it cannot
   vouch for a problem (tensor constants, device-dependent code, opaque operators, ...) or fails
   in any way, extraction falls back to steps 2-3. $UCUTLASS_EXTRACT_TRACER (or --tracer) forces
   one path: fast | export | auto (default). Both paths give byte-identical JSON; the tests check.
4. Each graph node is normalised by its ATen schema and mapped by ops.HANDLERS to an IR op with
   attrs and FLOPs; unknown operators become `opaque` with FLOPs from torch.utils.flop_counter
   (run on the fake values). Line numbers come from the nodes' stack traces (the last frame in the
   problem file). A peephole pass folds flip->cumsum->flip into cumsum(reverse) and
   cumsum(x)-x into cumsum(exclusive).
No real computation happens on problem-sized tensors at any step, with one exception: buffers
that feed a masked_fill's mask are read from a CPU build of the model (when its tensors total at
most 1 GiB) to record a triangular structure (tril/triu of ones), which the lowering folds into a
causal mask on the element's position.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import math
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import SCHEMA, deadline
from .loader import LoadedProblem, ProblemError, call_user, load_problem, problem_files, user_frame_line
from .ops import (DTYPE_NAMES, FILL_FACTORIES, IDENTITY_OPS, HANDLERS, Call, Mapped, Operand, Shape, Step,
                  Unmapped, _jsonable)

DEFAULT_SEED = 42


@dataclass(eq=False)
class TensorRec:
    kind: str                      # input, parameter, buffer, intermediate, output, constant
    dtype: str                     # IR dtype
    shape: List[int]
    name: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)   # index, state_dict, value, ...
    tdtype: str = ""               # torch dtype name ("float32"), for the op handlers

    def to_json(self) -> Dict[str, Any]:
        d = {"name": self.name, "kind": self.kind, "dtype": self.dtype, "shape": list(self.shape)}
        d.update(self.extra)
        return d


@dataclass(eq=False)
class OpRec:
    op: str
    inputs: List[Any]              # TensorRec, {"scalar": v}, or None
    outputs: List[TensorRec]
    attrs: Dict[str, Any]
    flops: int
    flop_class: str
    line: int
    origin: str = ""               # the call an expansion came from ("einsum('ij,jk->ik')"): JSON "from"


class _Bound:
    """Builds an nn.Module whose forward takes only the tensor inputs and re-inserts the non-tensor
    ones (they are constants of the problem). Its state_dict keys are the model's, prefixed 'model.'."""

    @staticmethod
    def make(model, values: List[Any], tensor_pos: List[int]):
        import torch.nn as nn

        class Bound(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *tensors):
                args = list(values)
                for i, t in zip(tensor_pos, tensors):
                    args[i] = t
                return self.model(*args)

        return Bound()


def _dtype_name(dt) -> str:
    return str(dt).replace("torch.", "")


def _ir_dtype(lp: LoadedProblem, dt, what: str, line: int = 0) -> str:
    n = _dtype_name(dt)
    if n not in DTYPE_NAMES:
        raise ProblemError(lp.path, f"unsupported dtype {n} for {what}",
                           "ucutlass handles f16, bf16, f32, f64, i8, i16, i32, i64, u8 and bool tensors; "
                           "convert the tensor (e.g. .float() or .real) in the problem file", line=line)
    return DTYPE_NAMES[n]


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _line_of(node, problem_path: str) -> int:
    st = node.meta.get("stack_trace") or ""
    real = os.path.realpath(problem_path)
    line = 0
    for fname, ln in _FRAME.findall(st):
        if fname == problem_path or os.path.realpath(fname) == real:
            line = int(ln)
    return line


def _json_value(lp: LoadedProblem, v, what: str):
    import torch

    if isinstance(v, (bool, int, str)) or v is None:
        return v
    if isinstance(v, float):
        return _jsonable(v)
    if isinstance(v, (list, tuple)):
        return [_json_value(lp, x, what) for x in v]
    if isinstance(v, torch.dtype):
        return DTYPE_NAMES.get(_dtype_name(v), _dtype_name(v))
    raise ProblemError(lp.path, f"{what} is a {type(v).__name__}, which the Problem IR cannot record",
                       "use numbers, strings, booleans or lists of them")


def _trace(lp: LoadedProblem, seed: int):
    """Builds the model and inputs on fake tensors and exports forward. Returns (ep, inputs,
    input_names, fake_mode)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    from .placement import Redirect, fake_module_conversions

    fake = FakeTensorMode(allow_non_fake_inputs=True)
    torch.manual_seed(seed)
    with fake, Redirect("cpu"):  # .cuda() and device="cuda" stay on the (fake) CPU
        try:
            with fake_module_conversions():
                model = lp.Model(*lp.init_inputs)
        except Exception as e:  # noqa: BLE001
            raise ProblemError(lp.path, f"Model(*get_init_inputs()) raised {type(e).__name__}: {_first_line(e)}",
                               "check that get_init_inputs() returns the constructor arguments of Model",
                               line=user_frame_line(e.__traceback__, lp.path)) from e
        torch.manual_seed(seed)
        inputs = call_user(lp, "get_inputs", lp.get_inputs)
        inputs = [fake.from_tensor(v) if isinstance(v, torch.Tensor) and not isinstance(v, FakeTensor) else v
                  for v in inputs]
    bound, names, tensor_pos = _check_and_bind(lp, model, inputs)
    try:
        with torch.no_grad(), _quiet_stderr(), Redirect("cpu"):
            ep = torch.export.export(bound, tuple(inputs[i] for i in tensor_pos), strict=False)
    except ProblemError:
        raise
    except Exception as e:  # noqa: BLE001
        line = user_frame_line(e.__traceback__, lp.path)
        raise ProblemError(lp.path, f"cannot trace Model.forward: {type(e).__name__}: {_first_line(e)}",
                           "forward must be traceable by torch.export: no control flow that depends on "
                           "tensor values, no .item()/.tolist(), no Python-side data access",
                           line=line) from e
    return ep, inputs, names, tensor_pos, fake


def _check_and_bind(lp: LoadedProblem, model, inputs):
    """Shared by both tracers: eval mode, IR dtypes of every parameter, buffer and tensor input,
    and the module that forward is traced through. Returns (bound, input names, tensor positions)."""
    import torch

    model.eval()
    for k, t in list(model.state_dict(keep_vars=True).items()):
        if isinstance(t, torch.Tensor):
            _ir_dtype(lp, t.dtype, f"parameter/buffer `{k}`")
    names = _input_names(model, len(inputs))
    tensor_pos = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)]
    for i in tensor_pos:
        _ir_dtype(lp, inputs[i].dtype, f"input {i} (`{names[i]}`) from get_inputs()")
    if not tensor_pos:
        raise ProblemError(lp.path, "get_inputs() returned no tensors",
                           "return the forward inputs as a list of tensors, e.g. [torch.rand(M, K)]")
    return _Bound.make(model, inputs, tensor_pos), names, tensor_pos


@contextlib.contextmanager
def _quiet_stderr():
    """torch.export logs graphs and warnings to stderr (fd 2) when a trace fails; our diagnostic says
    it in one line. Set UCUTLASS_DEBUG=1 to see PyTorch's output."""
    if os.environ.get("UCUTLASS_DEBUG"):
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _first_line(e: BaseException, limit: int = 300) -> str:
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= limit else first[:limit] + "..."


def _input_names(model, n: int) -> List[str]:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return [f"arg{i}" for i in range(n)]
    names: List[str] = []
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            break
    while len(names) < n:
        names.append(f"arg{len(names)}")
    return names[:n]


def _strip(target: str) -> str:
    return target[len("model."):] if target.startswith("model.") else target


TRACER_ENV = "UCUTLASS_EXTRACT_TRACER"
TRACERS = ("auto", "fast", "export")


def extract(path: str | os.PathLike, seed: int = DEFAULT_SEED, loaded: Optional[LoadedProblem] = None,
            tracer: Optional[str] = None) -> Dict[str, Any]:
    """Extracts the Problem IR of one problem file as a JSON-ready dict.

    ``tracer`` (default: $UCUTLASS_EXTRACT_TRACER, else "auto"): "export" traces with torch.export;
    "fast" with fasttrace (the same graph without importing torch._dynamo; raises when it cannot
    vouch for a problem); "auto" tries "fast" and falls back to "export" on any failure, so the
    result never depends on the fast tracer."""
    how = (tracer or os.environ.get(TRACER_ENV) or "auto").strip().lower()
    if how not in TRACERS:
        raise ValueError(f"{TRACER_ENV}={how!r}: expected one of {', '.join(TRACERS)}")
    lp = loaded or load_problem(path)
    init_args = _json_value(lp, lp.init_inputs, "get_init_inputs()")
    if how != "export":
        from . import fasttrace

        try:
            return _extract_traced(lp, seed, init_args, fasttrace.trace(lp, seed))
        except Exception as e:  # noqa: BLE001 - any failure of the fast path means: use torch.export
            if how == "fast":
                raise
            if os.environ.get("UCUTLASS_DEBUG"):
                print(f"{lp.path}: fast tracer fell back to torch.export: {type(e).__name__}: {_first_line(e)}",
                      file=sys.stderr)
    return _extract_traced(lp, seed, init_args, _trace(lp, seed))


def _extract_traced(lp: LoadedProblem, seed: int, init_args, traced) -> Dict[str, Any]:
    import torch
    from torch.export.graph_signature import InputKind, OutputKind

    from .fasttrace import Node as FastNode, Unsupported

    ep, inputs, names, tensor_pos, fake = traced
    node_types = (torch.fx.Node, FastNode)
    sig = ep.graph_signature
    graph = ep.graph

    recs: Dict[Any, Any] = {}           # fx node -> TensorRec, or list of TensorRec (multi-output)
    tensors: List[TensorRec] = []       # declaration order
    ops: List[OpRec] = []
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
    user_i = 0
    used_names = set()
    deferred: List[TensorRec] = []      # params/buffers/constants, declared on first use
    producer_of: Dict[int, str] = {}    # id(TensorRec) -> IR op that produced it

    def info_of(val) -> Shape:
        return Shape([int(d) for d in val.shape], _dtype_name(val.dtype))

    for ph in placeholders:
        spec = specs.get(ph.name)
        val = ph.meta.get("val")
        if spec is None or not isinstance(val, torch.Tensor):
            continue
        if spec.kind == InputKind.USER_INPUT:
            pos = tensor_pos[user_i]
            nm = names[pos] if names[pos] not in used_names else _unique(names[pos] + "_in", used_names)
            names[pos] = nm
            user_i += 1
            rec = TensorRec("input", _ir_dtype(lp, val.dtype, f"input {pos}"), list(map(int, val.shape)),
                            nm, {"index": pos}, _dtype_name(val.dtype))
            tensors.append(rec)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            key = _strip(spec.target)
            kind = "parameter" if spec.kind == InputKind.PARAMETER else "buffer"
            extra: Dict[str, Any] = {"state_dict": key}
            if kind == "buffer" and not spec.persistent:
                extra["persistent"] = False
            rec = TensorRec(kind, _ir_dtype(lp, val.dtype, f"{kind} `{key}`"), list(map(int, val.shape)), key, extra,
                            _dtype_name(val.dtype))
            deferred.append(rec)
        elif spec.kind == InputKind.CONSTANT_TENSOR:
            key = _strip(spec.target)
            rec = TensorRec("constant", _ir_dtype(lp, val.dtype, f"tensor constant `{key}`"),
                            list(map(int, val.shape)), "", _constant_extra(ep, spec.target, key),
                            _dtype_name(val.dtype))
            deferred.append(rec)
        else:
            raise ProblemError(lp.path, f"unsupported graph input kind {spec.kind.name} for `{spec.target}`",
                               "forward must not mutate inputs or use custom objects")
        used_names.add(rec.name)
        recs[ph] = rec

    out_node = next(n for n in graph.nodes if n.op == "output")
    out_specs = list(sig.output_specs)
    flat_outs = list(out_node.args[0])
    user_outs = [flat_outs[i] for i, s in enumerate(out_specs) if s.kind == OutputKind.USER_OUTPUT]
    if len(user_outs) != len(flat_outs):
        raise ProblemError(lp.path, "forward mutates a buffer or an input in place",
                           "compute new tensors instead of updating module state inside forward")

    def operand(v):
        if isinstance(v, node_types):
            r = recs.get(v)
            if isinstance(r, TensorRec):
                return Operand(r, Shape(list(r.shape), r.tdtype))
            raise ProblemError(lp.path, f"operand `{v.name}` is not a tensor the IR can describe",
                               "forward may only combine tensors and Python numbers", line=_line_of(v, lp.path))
        if isinstance(v, (list, tuple)) and any(isinstance(x, node_types) for x in v):
            return [operand(x) for x in v]
        return v

    for node in graph.nodes:
        if node.op != "call_function":
            if node.op in ("get_attr",):
                raise ProblemError(lp.path, "forward uses a construct torch.export turns into a sub-graph "
                                   "(torch.cond, torch.enable_grad, ...)", "write forward as straight-line tensor code",
                                   line=_line_of(node, lp.path))
            continue
        line = _line_of(node, lp.path)
        tgt = node.target
        if tgt.__name__ == "getitem" and getattr(tgt, "__module__", "") == "_operator":
            src, idx = node.args
            r = recs.get(src)
            if isinstance(r, list):
                recs[node] = r[idx]
            continue
        if not isinstance(tgt, torch._ops.OpOverload):
            raise ProblemError(lp.path, f"unsupported operation {getattr(tgt, '__name__', tgt)} in forward",
                               "write forward with torch operations only", line=line)
        packet = tgt._schema.name.split("::")[-1]
        overload = tgt._overloadname
        val = node.meta.get("val")
        if packet in IDENTITY_OPS and not isinstance(val, torch.Tensor):
            continue  # assertions and other ops without a tensor result
        outs_vals = list(val) if isinstance(val, (list, tuple)) else [val]
        if not all(isinstance(v, torch.Tensor) for v in outs_vals):
            raise ProblemError(lp.path, f"aten::{packet} produces a non-tensor value",
                               "avoid Python-side use of tensor values (sizes are fine)", line=line)
        out_infos = [info_of(v) for v in outs_vals]
        args = _normalise(tgt, node, operand)
        if packet not in IDENTITY_OPS and (getattr(tgt._schema, "is_mutable", False)
                                           or (packet.endswith("_") and not packet.startswith("_"))):
            packet = _inplace_to_functional(lp, packet, args, producer_of, line)

        if packet in IDENTITY_OPS or (packet == "dropout" and not args.get("train")):
            src = args.get("self", args.get("input"))
            if isinstance(src, Operand):
                recs[node] = src.ref
                continue
        if packet in ("to", "_to_copy", "type_as", "contiguous", "clone") and isinstance(args.get("self"), Operand):
            src = args["self"]
            if src.info.dtype == out_infos[0].dtype and packet != "clone":
                recs[node] = src.ref  # no-op conversion / already contiguous
                continue
        if packet == "broadcast_tensors":
            outs = []
            for t, o in zip(args["tensors"], out_infos):
                if list(t.info.shape) == o.shape:
                    outs.append(t.ref)
                else:
                    r = _new(lp, o, tensors, line)
                    ops.append(OpRec("expand", [t.ref], [r], {"shape": o.shape}, 0, "simt", line))
                    outs.append(r)
            recs[node] = outs
            continue
        if packet in FILL_FACTORIES:
            fill = FILL_FACTORIES[packet]
            if fill is None:
                fill = args.get("fill_value", args.get("s"))
            r = TensorRec("constant", _ir_dtype(lp, outs_vals[0].dtype, f"aten::{packet} result", line),
                          out_infos[0].shape, "", {"value": _jsonable(fill)}, out_infos[0].dtype)
            tensors.append(r)
            recs[node] = r
            continue

        for i, o in enumerate(outs_vals):
            _ir_dtype(lp, o.dtype, f"the result of aten::{packet}" + (f" (output {i})" if len(outs_vals) > 1 else ""),
                      line)
        call = Call(packet, overload, args, out_infos)
        mapped: Any = None
        why = ""
        h = HANDLERS.get(packet)
        if h is not None:
            try:
                mapped = h(call)
            except Unmapped as e:
                why = str(e)
            except (KeyError, TypeError, IndexError):
                mapped = None
        if mapped is None:
            if fake is None:
                raise Unsupported(f"aten::{packet} would be opaque")  # FLOPs are counted on fake tensors
            mapped = _opaque(tgt, node, fake, args, why)
        steps = mapped if isinstance(mapped, list) else [mapped]
        if steps[-1].out is not None and steps[-1].out.shape != out_infos[0].shape:
            raise AssertionError(f"aten::{packet}'s expansion computes {steps[-1].out.shape}, "
                                 f"not the traced {out_infos[0].shape}")
        made: List[List[TensorRec]] = []
        for k, m in enumerate(steps):
            last = k == len(steps) - 1
            outs = [_new(lp, o, tensors, line) for o in (out_infos if last else [m.out])]
            made.append(outs)
            inputs_ir = [x.ref if isinstance(x, Operand) else made[x.index][0] if isinstance(x, Step) else x
                         for x in m.inputs]
            if m.op == "opaque":
                inputs_ir = [x.ref for x in _operands_in(args)]
            ops.append(OpRec(m.op, inputs_ir, outs, m.attrs, int(m.flops), m.flop_class, line, m.origin))
            for o in outs:
                producer_of[id(o)] = m.op
        recs[node] = made[-1] if isinstance(val, (list, tuple)) else made[-1][0]

    # Outputs.
    output_recs: List[TensorRec] = []
    for i, n in enumerate(user_outs):
        r = recs.get(n) if isinstance(n, node_types) else None
        if not isinstance(r, TensorRec):
            raise ProblemError(lp.path, f"forward returns a non-tensor value at output {i}",
                               "return tensors only (a tensor, or a tuple of tensors)")
        if r.kind == "intermediate":
            r.kind = "output"
            r.extra["index"] = i
        output_recs.append(r)

    ops = _fold_scans(ops, output_recs)
    ops = _fold_diag_matmul(ops, output_recs, tensors)
    _name_everything(tensors, deferred, ops, output_recs, used_names)

    declared = [t for t in tensors if t.kind == "input"]
    referenced = {id(x) for op in ops for x in op.inputs if isinstance(x, TensorRec)}
    referenced |= {id(r) for r in output_recs}
    declared += [t for t in deferred if id(t) in referenced]
    declared += [t for t in tensors if t.kind != "input" and (t.kind != "constant" or id(t) in referenced)]
    produced = {id(o) for op in ops for o in op.outputs}
    declared = [t for t in declared if t.kind in ("input", "parameter", "buffer", "constant") or id(t) in produced]
    _annotate_triangles(lp, seed, declared, ops)

    doc = {
        "schema": SCHEMA,
        "name": lp.name,
        "source": lp.path,
        "source_sha256": lp.source_sha256,
        "doc": lp.doc,
        "init_seed": seed,
        "torch_version": torch.__version__.split("+")[0],
        "tensors": [t.to_json() for t in declared],
        "ops": [_op_json(i, op) for i, op in enumerate(ops)],
        "inputs": [names[i] for i in tensor_pos],
        "outputs": [r.name for r in output_recs],
        "init_args": init_args,
        "extra_inputs": [{"index": i, "value": _json_value(lp, v, f"get_inputs()[{i}]")}
                         for i, v in enumerate(inputs) if i not in tensor_pos],
    }
    if not doc["ops"]:
        raise ProblemError(lp.path, "forward performs no operation (it returns its inputs unchanged)",
                           "a problem must compute something")
    return _jsonable(doc)  # non-finite numbers anywhere (a masked_fill with -inf, ...) as strings


# Ops a mask may pass through between its buffer and a masked_fill (values stay 0/1).
_MASK_PATH_OPS = {"slice", "view", "reshape", "unsqueeze", "squeeze", "expand", "flatten", "to", "eq", "ne"}
# A real build of the model on the CPU to read mask buffers is skipped above this many bytes of
# parameters and buffers.
_MASK_BUILD_LIMIT = 1 << 30


def _mask_sources(ops: List[OpRec]) -> List[TensorRec]:
    """Buffers and constants whose values reach a masked_fill's mask through _MASK_PATH_OPS."""
    producer = {id(o): op for op in ops for o in op.outputs}
    found: Dict[int, TensorRec] = {}
    for op in ops:
        if op.op != "masked_fill" or len(op.inputs) < 2 or not isinstance(op.inputs[1], TensorRec):
            continue
        r = op.inputs[1]
        for _ in range(32):
            if r.kind in ("buffer", "constant"):
                found[id(r)] = r
                break
            p = producer.get(id(r))
            if p is None or p.op not in _MASK_PATH_OPS or not p.inputs or not isinstance(p.inputs[0], TensorRec):
                break
            r = p.inputs[0]
    return list(found.values())


def triangle_structure(t) -> Optional[Dict[str, Any]]:
    """{"kind": "tril" | "triu", "diagonal": d} when ``t``'s values are tril(ones, d) or triu(ones, d)
    over its last two dims (zeros elsewhere, in any dtype) with every leading dim 1; else None. A
    matrix of all ones or all zeros is not reported (it masks everything or nothing)."""
    import torch

    if t.dim() < 2 or any(int(d) != 1 for d in t.shape[:-2]) or t.numel() == 0 or t.is_complex():
        return None
    m = t.detach().reshape(int(t.shape[-2]), int(t.shape[-1]))
    if not bool(((m == 0) | (m == 1)).all()):
        return None
    ones = m != 0
    rows, cols = ones.shape
    counts = ones.sum(dim=1)
    partial = ((counts > 0) & (counts < cols)).nonzero()
    if partial.numel() == 0:
        return None
    i = int(partial[0, 0])
    k = int(counts[i])
    # tril(d): row i holds the first i + d + 1 columns; triu(d): all from column i + d on
    full = torch.ones(rows, cols, dtype=torch.bool)
    for kind, fn, d in (("tril", torch.tril, k - 1 - i), ("triu", torch.triu, cols - k - i)):
        if bool((fn(full, d) == ones).all()):
            return {"kind": kind, "diagonal": d}
    return None


def _annotate_triangles(lp: LoadedProblem, seed: int, declared: List[TensorRec], ops: List[OpRec]) -> None:
    """Marks the buffers and constants that feed a masked_fill's mask with their triangular
    structure (docs/problem-ir.md, "structure"), so the lowering can turn minGPT's
    `masked_fill(self.bias[:, :, :T, :T] == 0, -inf)` into a causal mask on the element's position.
    The one place extraction computes real values: the model is built on the CPU under the same seed
    (only when such a mask exists and the model's tensors total at most _MASK_BUILD_LIMIT bytes);
    any failure leaves the tensors unmarked, which only costs the fold."""
    declared_ids = {id(r) for r in declared}
    cands = [r for r in _mask_sources(ops) if id(r) in declared_ids and len(r.shape) >= 2
             and all(d == 1 for d in r.shape[:-2]) and ("state_dict" in r.extra or "attr" in r.extra)]
    if not cands:
        return
    import torch

    from .placement import Redirect

    total = sum(math.prod(r.shape) * 4 for r in declared if r.kind in ("parameter", "buffer", "constant"))
    if total > _MASK_BUILD_LIMIT:
        return
    try:
        torch.manual_seed(seed)
        with torch.no_grad(), Redirect("cpu"), _quiet_stderr():
            model = lp.Model(*lp.init_inputs)
        tensors = dict(model.named_buffers(remove_duplicate=False))
        for r in cands:
            key = r.extra.get("state_dict") or r.extra.get("attr")
            t = tensors.get(key)
            if t is None:
                obj = model
                for part in key.split("."):
                    obj = getattr(obj, part, None)
                t = obj
            if isinstance(t, torch.Tensor) and list(t.shape) == list(r.shape):
                st = triangle_structure(t)
                if st is not None:
                    r.extra["structure"] = st
    except Exception as e:  # noqa: BLE001 - the fold is an optimisation; extraction must not fail on it
        if os.environ.get("UCUTLASS_DEBUG"):
            print(f"{lp.path}: mask buffers not inspected: {type(e).__name__}: {_first_line(e)}", file=sys.stderr)


_VIEW_PRODUCERS = {"view", "reshape", "permute", "transpose", "t", "expand", "squeeze", "unsqueeze",
                   "flatten", "split", "chunk", "slice", "select"}


def _inplace_to_functional(lp: LoadedProblem, packet: str, args: Dict[str, Any], producer_of, line: int) -> str:
    """The tracer records `y.relu_()` as a new value that later uses refer to, so an in-place op on
    an intermediate is its functional twin. Updating inputs, parameters or buffers (problem state)
    or a view (which would also change its base) is rejected."""
    target = args.get("self", args.get("input"))
    if isinstance(target, Operand):
        rec = target.ref
        if rec.kind != "intermediate":
            what = {"input": "the input", "parameter": "the parameter", "buffer": "the buffer",
                    "constant": "the constant"}.get(rec.kind, "the tensor")
            raise ProblemError(lp.path, f"forward updates {what} `{rec.name or 'tensor'}` in place (aten::{packet})",
                               "compute a new tensor instead (y = x + 1, not x.add_(1)); a problem's inputs and "
                               "module state must stay unchanged", line=line)
        if producer_of.get(id(rec)) in _VIEW_PRODUCERS:
            raise ProblemError(lp.path, f"forward updates a view in place (aten::{packet}), which also changes "
                               "the tensor it views", "build the result with torch.where, masked_fill or cat instead",
                               line=line)
    return packet[:-1] if packet.endswith("_") else packet


def _constant_extra(ep, target: str, key: str) -> Dict[str, Any]:
    import torch

    extra: Dict[str, Any] = {}
    t = ep.constants.get(target)
    real = getattr(t, "constant", None) if t is not None else None
    if real is None and isinstance(t, torch.Tensor) and t.device.type != "meta" and not _is_fake(t):
        real = t
    if real is not None and real.numel() > 0:
        flat = real.detach().reshape(-1)
        first = flat[0]
        if bool((flat == first).all()):
            extra["value"] = _jsonable(first.item())
        elif real.numel() <= 1024:
            extra["value"] = _jsonable(real.tolist())
    if "value" not in extra and not key.startswith("lifted_tensor"):
        extra["attr"] = key  # a plain tensor attribute of the module: read it from the built model
    return extra


def _is_fake(t) -> bool:
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)


def _new(lp: LoadedProblem, info: Shape, tensors: List[TensorRec], line: int) -> TensorRec:
    r = TensorRec("intermediate", _ir_dtype(lp, info.dtype, "an intermediate", line), list(info.shape),
                  tdtype=info.dtype)
    tensors.append(r)
    return r


def _normalise(tgt, node, operand) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    args = list(node.args)
    kwargs = dict(node.kwargs)
    for i, a in enumerate(tgt._schema.arguments):
        if i < len(args) and not a.kwarg_only:
            v = args[i]
        elif a.name in kwargs:
            v = kwargs[a.name]
        elif a.has_default_value():
            v = a.default_value
        else:
            v = None
        out[a.name] = operand(v)
    return out


def _operands_in(args: Dict[str, Any]) -> List[Operand]:
    res: List[Operand] = []
    for v in args.values():
        if isinstance(v, Operand):
            res.append(v)
        elif isinstance(v, list):
            res.extend(x for x in v if isinstance(x, Operand))
    return res


def _opaque(tgt, node, fake, args: Dict[str, Any], why: str) -> Mapped:
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    flops, known, cls = 0, False, "simt"
    try:
        a = torch.fx.node.map_arg(node.args, lambda n: n.meta.get("val"))
        k = torch.fx.node.map_arg(node.kwargs, lambda n: n.meta.get("val"))
        counter = FlopCounterMode(display=False)
        with fake, counter:
            tgt(*a, **k)
        flops = int(counter.get_total_flops())
        known = flops > 0 or tgt.overloadpacket in torch.utils.flop_counter.flop_registry
        cls = "tensor" if flops > 0 else "simt"
    except Exception:  # noqa: BLE001 - counting is best effort; unknown stays flops_known=false
        pass
    attrs: Dict[str, Any] = {"target": f"{tgt._schema.name}.{tgt._overloadname}", "flops_known": known}
    attrs.update((k, v) for k, v in args.items() if isinstance(v, str) and k not in attrs)  # einsum's equation
    if why:
        attrs["why"] = why
    return Mapped("opaque", [], attrs, flops, cls)


def _fold_scans(ops: List[OpRec], outputs: List[TensorRec]) -> List[OpRec]:
    """cumsum(x) - x and cumsum(cat([0, x]).narrow(0, n)) -> cumsum(exclusive);
    flip(d) -> cumsum(d) -> flip(d) -> cumsum(reverse)."""

    def uses():
        u: Dict[int, List[OpRec]] = {}
        for op in ops:
            for x in op.inputs:
                if isinstance(x, TensorRec):
                    u.setdefault(id(x), []).append(op)
        return u

    def producer():
        return {id(o): op for op in ops for o in op.outputs}

    out_ids = {id(r) for r in outputs}
    changed = True
    while changed:
        changed = False
        u, prod = uses(), producer()
        for op in ops:
            if op.op not in ("cumsum",) or len(op.outputs) != 1:
                continue
            y = op.outputs[0]
            x = op.inputs[0]
            users = u.get(id(y), [])
            # exclusive: the only use of y is sub(y, x)
            if (not op.attrs.get("exclusive") and len(users) == 1 and id(y) not in out_ids
                    and users[0].op == "sub" and users[0].inputs[:2] == [y, x]
                    and users[0].attrs.get("alpha", 1) == 1 and users[0].outputs[0].shape == y.shape):
                sub = users[0]
                op.attrs["exclusive"] = True
                op.outputs = sub.outputs
                op.flops += sub.flops
                ops.remove(sub)
                changed = True
                break
            # exclusive, written out: cumsum(cat([zeros with 1 along dim, w], dim).narrow(dim, 0, n))
            sl = prod.get(id(x)) if isinstance(x, TensorRec) else None
            dim = op.attrs["dim"]
            ct = prod.get(id(sl.inputs[0])) if sl is not None and sl.op == "slice" else None
            if (not op.attrs.get("exclusive") and not op.attrs.get("reverse") and ct is not None and ct.op == "cat"
                    and sl.attrs.get("dim") == dim and sl.attrs.get("start") == 0 and sl.attrs.get("step") == 1
                    and ct.attrs.get("dim") == dim and len(ct.inputs) == 2
                    and isinstance(ct.inputs[0], TensorRec) and ct.inputs[0].kind == "constant"
                    and ct.inputs[0].extra.get("value") == 0 and ct.inputs[0].shape[dim] == 1
                    and isinstance(ct.inputs[1], TensorRec) and ct.inputs[1].shape == y.shape
                    and sl.attrs.get("end") == y.shape[dim]
                    and len(u.get(id(x), [])) == 1 and len(u.get(id(sl.inputs[0]), [])) == 1
                    and id(x) not in out_ids and id(sl.inputs[0]) not in out_ids):
                op.inputs = [ct.inputs[1]]
                op.attrs["exclusive"] = True
                ops.remove(sl)
                ops.remove(ct)
                changed = True
                break
            # reverse: x = flip(w, [dim]) used only here; y used only by flip(y, [dim])
            f1 = prod.get(id(x)) if isinstance(x, TensorRec) else None
            if (not op.attrs.get("reverse") and f1 is not None and f1.op == "flip" and f1.attrs.get("dims") == [dim]
                    and len(u.get(id(x), [])) == 1 and id(x) not in out_ids and len(users) == 1
                    and id(y) not in out_ids and users[0].op == "flip" and users[0].attrs.get("dims") == [dim]):
                f2 = users[0]
                op.inputs = [f1.inputs[0]]
                op.outputs = f2.outputs
                op.attrs["reverse"] = True
                ops.remove(f1)
                ops.remove(f2)
                changed = True
                break
    return ops


def _fold_diag_matmul(ops: List[OpRec], outputs: List[TensorRec], tensors: List[TensorRec]) -> List[OpRec]:
    """torch.diag(v) @ B -> v[:, None] * B: the N x N diagonal matrix (aten::diag, outside the IR)
    is only ever multiplied, so the product is a row scaling, N*M multiplies instead of a dense
    N x N x M GEMM (KernelBench L1 #12). Only where the diagonal matrix has no other use."""
    out_ids = {id(r) for r in outputs}
    for op in list(ops):
        if op.op != "opaque" or op.attrs.get("target") != "aten::diag.default" or len(op.outputs) != 1:
            continue
        v, d = (op.inputs[0] if op.inputs else None), op.outputs[0]
        if not isinstance(v, TensorRec) or len(v.shape) != 1 or d.shape != [v.shape[0]] * 2 or id(d) in out_ids:
            continue  # diag of a matrix (extracts a diagonal), or an off-diagonal k: not this shape
        users = [o for o in ops if any(x is d for x in o.inputs)]
        if len(users) != 1 or users[0].op not in ("matmul", "mm") or users[0].inputs[0] is not d:
            continue
        mm, b = users[0], users[0].inputs[1]
        if not isinstance(b, TensorRec) or len(b.shape) != 2 or b.shape[0] != v.shape[0] or b is d:
            continue
        col = TensorRec("intermediate", v.dtype, [v.shape[0], 1], tdtype=v.tdtype)
        tensors.append(col)
        why = "torch.diag(v) @ B as v[:, None] * B"
        ops[ops.index(op)] = OpRec("unsqueeze", [v], [col], {"dim": 1}, 0, "simt", op.line, why)
        ops[ops.index(mm)] = OpRec("mul", [col, b], mm.outputs, {}, b.shape[0] * b.shape[1], "simt", mm.line, why)
    return ops


def _name_everything(tensors, deferred, ops, outputs, used_names) -> None:
    produced = [o for op in ops for o in op.outputs]
    for i, r in enumerate(outputs):
        if r.kind == "output" and not r.name:
            r.name = _unique(f"out{i}", used_names)
        elif r.kind == "intermediate":  # folded into an output by _fold_scans
            r.kind = "output"
            r.extra["index"] = i
            r.name = _unique(f"out{i}", used_names)
    k = 0
    for r in produced:
        if not r.name:
            r.name = _unique(f"t{k}", used_names)
            k += 1
    c = 0
    for r in deferred + [t for t in tensors if t.kind == "constant"]:
        if not r.name:
            r.name = _unique(f"c{c}", used_names)
            c += 1


def _unique(base: str, used: set) -> str:
    name, n = base, 1
    while name in used:
        name = f"{base}_{n}"
        n += 1
    used.add(name)
    return name


def _op_json(i: int, op: OpRec) -> Dict[str, Any]:
    ins = []
    for x in op.inputs:
        if isinstance(x, TensorRec):
            ins.append(x.name)
        else:
            ins.append(x)
    d = {"id": i, "op": op.op, "inputs": ins, "outputs": [o.name for o in op.outputs],
         "attrs": op.attrs, "flops": op.flops, "flop_class": op.flop_class, "line": op.line}
    if op.origin:
        d["from"] = op.origin
    return d


DTYPE_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "bool": 1}


def summary(doc: Dict[str, Any]) -> Dict[str, int]:
    """FLOPs by class and the minimum bytes (inputs, used parameters/buffers, outputs, each once)."""
    flops = {"tensor": 0, "simt": 0}
    for op in doc["ops"]:
        flops[op["flop_class"]] += op["flops"]
    by = 0
    for t in doc["tensors"]:
        if t["kind"] in ("input", "parameter", "buffer", "output"):
            by += math.prod(t["shape"]) * DTYPE_BYTES[t["dtype"]]
    return {"flops_tensor": flops["tensor"], "flops_simt": flops["simt"], "bytes_min": by}


def dumps(doc: Dict[str, Any]) -> str:
    """problem.json's text: strict JSON (a NaN or infinity left as a number is a bug of ours)."""
    return json.dumps(doc, indent=1, allow_nan=False) + "\n"


def write_json(doc: Dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(dumps(doc))
    os.replace(tmp, out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ucutlass_torch.extract",
                                 description="Extract the Problem IR (ucutlass.problem/1) of KernelBench-format files.")
    ap.add_argument("path", help="a problem .py file, a folder of them, or a KernelBench checkout")
    ap.add_argument("-o", "--output", help="output .json (one problem) or folder (several); default: stdout")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed recorded as init_seed (default 42)")
    ap.add_argument("--keep-going", action="store_true", help="for folders: report bad problems and continue")
    ap.add_argument("--tracer", choices=TRACERS, default=None,
                    help=f"auto (default, or ${TRACER_ENV}): the fast tracer, falling back to torch.export; "
                         "fast: the fast tracer only; export: torch.export only")
    ap.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                    help=f"time limit per problem (default ${deadline.ENV}, else {deadline.DEFAULT_S:g})")
    a = ap.parse_args(argv)
    if a.tracer is None and (os.environ.get(TRACER_ENV) or "auto").strip().lower() not in TRACERS:
        print(f"error: {TRACER_ENV}={os.environ[TRACER_ENV]!r} is not one of {', '.join(TRACERS)}", file=sys.stderr)
        return 2
    try:
        limit = a.timeout if a.timeout is not None else deadline.limit_from_env()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not limit > 0:
        print("error: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    t0 = time.time()
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print(f"error: PyTorch cannot be imported by {sys.executable}: {e}\n"
              "hint: install torch in this Python (pip install torch), or point UCUTLASS_PYTHON at one that has it",
              file=sys.stderr)
        return 2
    try:
        files = problem_files(a.path)
    except ProblemError as e:
        print(e, file=sys.stderr)
        return 1
    many = Path(a.path).is_dir()
    if not files:
        print(f"{a.path}: error: no problem files (*.py) found\nhint: pass a problem file or a folder of them",
              file=sys.stderr)
        return 1
    failures = 0
    for f in files:
        try:
            with deadline.deadline(str(f), limit):
                doc = extract(f, seed=a.seed, tracer=a.tracer)
        except (ProblemError, deadline.ExtractTimeout) as e:
            print(e, file=sys.stderr)
            failures += 1
            if not a.keep_going:
                return 1
            continue
        except Exception as e:  # noqa: BLE001 - a bug of ours must still name the problem file
            import traceback

            traceback.print_exc()
            print(f"{f}: error: internal error in the extractor: {type(e).__name__}: {e}\n"
                  "hint: this is a bug in ucutlass_torch; please report it with the problem file", file=sys.stderr)
            failures += 1
            if not a.keep_going:
                return 1
            continue
        if a.output is None:
            sys.stdout.write(dumps(doc))
        elif many or a.output.endswith(os.sep) or Path(a.output).is_dir():
            write_json(doc, Path(a.output) / f"{f.stem}.json")
        else:
            write_json(doc, Path(a.output))
    if many:
        print(f"extracted {len(files) - failures}/{len(files)} problems in {time.time() - t0:.1f} s",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
