"""Structural validation of a Problem IR document (ucutlass.problem/1), the Python twin of the rules
src/problem enforces in C++ (docs/problem-ir.md). Used by the tests and by `extract --check`.

validate(doc) returns a list of messages, empty when the document is valid.
"""

from __future__ import annotations

from typing import Any, Dict, List

from . import SCHEMA
from .ops import VOCABULARY, DTYPE_NAMES

KINDS = {"input", "parameter", "buffer", "intermediate", "output", "constant"}
DTYPES = set(DTYPE_NAMES.values())
TOP_FIELDS = ("schema", "name", "source", "source_sha256", "doc", "init_seed", "torch_version", "tensors",
              "ops", "inputs", "outputs", "init_args", "extra_inputs")


def validate(doc: Dict[str, Any]) -> List[str]:
    errs: List[str] = []
    if doc.get("schema") != SCHEMA:
        return [f"schema is {doc.get('schema')!r}, this reader reads {SCHEMA!r}"]
    for f in TOP_FIELDS:
        if f not in doc:
            errs.append(f"missing top-level field `{f}`")
    if errs:
        return errs
    tensors: Dict[str, Dict[str, Any]] = {}
    for t in doc["tensors"]:
        n = t.get("name")
        if not isinstance(n, str) or not n:
            errs.append(f"tensor without a name: {t}")
            continue
        if n in tensors:
            errs.append(f"tensor `{n}` declared twice")
        tensors[n] = t
        if t.get("kind") not in KINDS:
            errs.append(f"tensor `{n}`: unknown kind {t.get('kind')!r}")
        if t.get("dtype") not in DTYPES:
            errs.append(f"tensor `{n}`: unknown dtype {t.get('dtype')!r}")
        shape = t.get("shape")
        if not isinstance(shape, list) or not all(isinstance(d, int) and d >= 0 for d in shape):
            errs.append(f"tensor `{n}`: shape must be a list of non-negative integers, got {shape!r}")
        if t.get("kind") in ("parameter", "buffer") and not isinstance(t.get("state_dict"), str):
            errs.append(f"tensor `{n}`: {t['kind']} without a state_dict key")
        if t.get("kind") in ("input", "output") and not isinstance(t.get("index"), int):
            errs.append(f"tensor `{n}`: {t['kind']} without an index")
    for i, name in enumerate(doc["inputs"]):
        t = tensors.get(name)
        if t is None or t["kind"] != "input":
            errs.append(f"inputs[{i}] `{name}` is not an input tensor")
    n_inputs = sum(1 for t in tensors.values() if t["kind"] == "input")
    if n_inputs != len(doc["inputs"]):
        errs.append(f"{n_inputs} input tensors but {len(doc['inputs'])} names in `inputs`")

    defined = {n for n, t in tensors.items() if t["kind"] in ("input", "parameter", "buffer", "constant")}
    produced_by: Dict[str, int] = {}
    if not doc["ops"]:
        errs.append("no ops")
    for i, op in enumerate(doc["ops"]):
        where = f"ops[{i}] ({op.get('op')})"
        if op.get("id") != i:
            errs.append(f"{where}: id {op.get('id')} != position {i}")
        if op.get("op") not in VOCABULARY:
            errs.append(f"{where}: unknown op name")
        if op.get("flop_class") not in ("tensor", "simt"):
            errs.append(f"{where}: flop_class must be tensor or simt")
        if not isinstance(op.get("flops"), int) or op["flops"] < 0:
            errs.append(f"{where}: flops must be a non-negative integer")
        if not isinstance(op.get("line"), int) or op["line"] < 0:
            errs.append(f"{where}: line must be a non-negative integer")
        if not isinstance(op.get("attrs"), dict):
            errs.append(f"{where}: attrs must be an object")
        if op.get("op") == "opaque" and "target" not in op.get("attrs", {}):
            errs.append(f"{where}: opaque op without attrs.target")
        for x in op.get("inputs", []):
            if x is None or (isinstance(x, dict) and set(x) == {"scalar"}):
                continue
            if not isinstance(x, str) or x not in tensors:
                errs.append(f"{where}: operand {x!r} is not a declared tensor")
            elif x not in defined:
                errs.append(f"{where}: operand `{x}` used before it is produced")
        if not op.get("outputs"):
            errs.append(f"{where}: no outputs")
        for o in op.get("outputs", []):
            t = tensors.get(o)
            if t is None:
                errs.append(f"{where}: output `{o}` is not a declared tensor")
                continue
            if t["kind"] not in ("intermediate", "output"):
                errs.append(f"{where}: writes `{o}` of kind {t['kind']}")
            if o in produced_by:
                errs.append(f"{where}: `{o}` already produced by ops[{produced_by[o]}]")
            produced_by[o] = i
            defined.add(o)
    for n, t in tensors.items():
        if t["kind"] in ("intermediate", "output") and n not in produced_by:
            errs.append(f"tensor `{n}` ({t['kind']}) is never produced")
    for i, name in enumerate(doc["outputs"]):
        t = tensors.get(name)
        if t is None:
            errs.append(f"outputs[{i}] `{name}` is not a declared tensor")
        elif t["kind"] == "intermediate":
            errs.append(f"outputs[{i}] `{name}` is declared intermediate")
    for t in tensors.values():
        if t["kind"] == "output" and doc["outputs"][t["index"]] != t["name"]:
            errs.append(f"output `{t['name']}` has index {t['index']} but outputs[{t['index']}] is "
                        f"`{doc['outputs'][t['index']]}`")
    return errs
