"""Dynamo FX graphs cut into what the language covers and what it does not, and a covered
subgraph written as a KernelBench problem file (docs/python.md, "The torch.compile backend").

:func:`partition` marks a node supported when its operator is one the extractor maps to the
Problem IR (ops.HANDLERS, the identity ops) and it produces one tensor of an IR dtype with static
shapes; torch's capability partitioner groups supported nodes into ``fused_<n>`` submodules.
Partitions that only move data (views, copies) are given back: a kernel would only add a launch.

:func:`write_problem` writes one partition as ``<dir>/<stem>.py`` (Model, get_inputs,
get_init_inputs) with the weights beside it (``<stem>.pt``, loaded by ``Model.__init__`` from its
absolute path: the exported model_new.py runs the source without a file name) and, when the graph
has non-floating inputs, their saved examples (``<stem>.inputs.pt``, read by ``get_inputs``; the
weights are not read again for every trial's inputs). Placeholders and
values are renamed in graph order (``a<i>``, ``v<i>``), so two copies of one block (layer 0 and
layer 1 of a transformer) write one text and share one :func:`graph_key`.
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch
import torch.fx as fx

from . import __version__, ops

# Python operators Dynamo records by their operator-module function: the IR op of each.
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
              operator.matmul: "matmul", operator.neg: "neg", operator.pow: "pow", operator.iadd: "add",
              operator.imul: "mul", operator.isub: "sub", operator.itruediv: "div", operator.eq: "eq",
              operator.ne: "ne", operator.lt: "lt", operator.le: "le", operator.gt: "gt", operator.ge: "ge"}
_MOVES_ONLY = set(ops.VIEW_OPS) | set(ops.IDENTITY_OPS) | {"to", "_to_copy", "type_as", "dropout", "contiguous",
                                                              "clone", "view_as", "reshape_as", "expand_as"}
# The globals FX's generated code may name, and how the problem file defines each.
_GLOBALS = {"torch": "import torch", "device": "from torch import device", "inf": "inf = float('inf')",
            "nan": "nan = float('nan')", "NoneType": "NoneType = type(None)",
            "fx_pytree": "import torch.fx._pytree as fx_pytree", "pytree": "import torch.utils._pytree as pytree",
            "operator": "import operator"}


def example_value(node: fx.Node) -> Any:
    return node.meta.get("example_value", node.meta.get("val"))


def op_name(node: fx.Node) -> Optional[str]:
    """The IR operation a call node is, or None (placeholders, outputs, attributes, modules)."""
    if node.op == "call_function":
        if node.target in _OPERATORS:
            return _OPERATORS[node.target]
        name = getattr(node.target, "__name__", "")
        return name.split(".")[-1] if name and name != "getitem" else None
    if node.op == "call_method":
        return str(node.target)
    return None


def _static_tensor(v: Any) -> bool:
    return (isinstance(v, torch.Tensor) and all(isinstance(d, int) for d in v.shape)
            and str(v.dtype).replace("torch.", "") in ops.DTYPE_NAMES)


def why_unsupported(node: fx.Node) -> str:
    """"" when the language covers ``node``, else why not (the report names the reason)."""
    name = op_name(node)
    if name is None:
        return "not an operation"
    if name not in ops.HANDLERS and name not in ops.IDENTITY_OPS:
        return f"operator {name!r} is not in the Problem IR's vocabulary"
    if not _static_tensor(example_value(node)):
        return f"{name}: not one tensor of an IR dtype with static shapes"
    for a in node.all_input_nodes:
        v = example_value(a)
        if isinstance(v, torch.Tensor) and not _static_tensor(v):
            return f"{name}: an operand has dynamic shapes or a dtype outside the IR"
    return ""


# In-place operations: they change their first operand. A covered subgraph computes out of place,
# so it may hold one only where nothing reads the old value afterwards (mutation_hazards).
_INPLACE_FUNCTIONS = {operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ipow,
                      operator.setitem}
# Operations whose result may share its first operand's storage (a change to one is seen by the other).
_ALIASING = (set(ops.VIEW_OPS) - {"clone", "cat", "stack", "pad", "masked_fill", "tril", "triu", "gather",
                                  "index_select", "flip"}) | set(ops.IDENTITY_OPS) | {
    "to", "type_as", "view_as", "reshape_as", "expand_as", "getitem", "narrow", "as_strided", "unflatten",
    "movedim", "swapaxes", "unbind", "split_with_sizes", "type", "float", "half", "bfloat16"}


def call_name(node: fx.Node) -> str:
    """A call node's method or function name (a Python operator's own name, not its IR op)."""
    if node.op == "call_method":
        return str(node.target)
    return getattr(node.target, "__name__", str(node.target))


def mutates(node: fx.Node) -> bool:
    """Whether ``node`` changes its first operand in place (``add_``, ``x += y`` on a tensor,
    ``relu(x, inplace=True)``, ``x[i] = y``)."""
    if node.op not in ("call_function", "call_method"):
        return False
    if node.kwargs.get("inplace") is True or (node.op == "call_function" and node.target in _INPLACE_FUNCTIONS):
        return True
    name = call_name(node).split(".")[0]  # an ATen overload's name: "add_.Tensor"
    return name.endswith("_") and not name.endswith("__") and name not in ops.IDENTITY_OPS


def mutation_hazards(gm: fx.GraphModule) -> Dict[fx.Node, str]:
    """The call nodes that must stay outside every covered subgraph because of an in-place
    change, with the reason. Values that share storage (a tensor, its views, an in-place op's
    result) form one class. An in-place op the language covers, on a class that no later node
    reads through an older member and that is no input or weight of the graph, is safe out of
    place (the subgraph writes a new tensor where PyTorch wrote the old one: nothing can tell).
    Otherwise the op and every reader of the class stay with the fallback, which runs them in the
    graph's order, so each reader sees the value PyTorch's order gives it."""
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    root: Dict[fx.Node, fx.Node] = {}
    for n in gm.graph.nodes:
        src = n.args[0] if n.args and isinstance(n.args[0], fx.Node) else None
        aliasing = mutates(n) or (n.op in ("call_function", "call_method") and
                                  (op_name(n) in _ALIASING or call_name(n) in _ALIASING))
        root[n] = root.get(src, src) if src is not None and aliasing else n
    members: Dict[fx.Node, List[fx.Node]] = {}
    for n, r in root.items():
        members.setdefault(r, []).append(n)
    hazards: Dict[fx.Node, str] = {}
    for m in gm.graph.nodes:
        if not mutates(m):
            continue
        r = root[m]
        stale = [u for v in members[r] if order[v] < order[m] for u in v.users if u is not m and order[u] > order[m]]
        if not stale and r.op not in ("placeholder", "get_attr") and not why_unsupported(m):
            continue
        why = (f"{r.name} is changed in place by {m.name} ({call_name(m)})"
               + (f" and read after it by {stale[0].name}" if stale else "")
               + ("; it is an input or weight of the graph" if r.op in ("placeholder", "get_attr") else ""))
        hazards[m] = why
        for v in members[r]:
            # the class's views too (a covered view is a copy, which the change would miss), not the
            # value's producer: a subgraph that ends with it hands the fallback the tensor to change
            if v is not r and v.op in ("call_function", "call_method"):
                hazards.setdefault(v, why)
            for u in v.users:
                if u.op in ("call_function", "call_method"):
                    hazards.setdefault(u, why)
    return hazards


def partition(gm: fx.GraphModule, hazards: Optional[Dict[fx.Node, str]] = None) -> Tuple[fx.GraphModule, List[str]]:
    """``gm`` with every group of covered nodes fused into a ``fused_<n>`` submodule; returns it
    and the names of the submodules worth a kernel (those computing something). A node an in-place
    change makes unsafe to move (``hazards``: mutation_hazards(gm), computed here when not given)
    is not covered."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupportBase

    if hazards is None:
        hazards = mutation_hazards(gm)

    class Covered(OperatorSupportBase):
        def is_node_supported(self, submodules, node: fx.Node) -> bool:
            return node.op in ("call_function", "call_method") and not why_unsupported(node) and node not in hazards

    parts = CapabilityBasedPartitioner(gm, Covered(), allows_single_node_partition=True).propose_partitions()
    keep = [p for p in parts if any(op_name(n) not in _MOVES_ONLY for n in p.nodes)]
    if not keep:
        return gm, []
    from torch.fx.passes.utils.fuser_utils import fuse_by_partitions
    fused = fuse_by_partitions(gm, [dict.fromkeys(p.nodes) for p in keep], prefix="fused_")
    names = [n.target for n in fused.graph.nodes if n.op == "call_module" and str(n.target).startswith("fused_")]
    return fused, names


@dataclass
class Spec:
    """One covered subgraph as a problem: its canonical code, each argument's role (``param``:
    a weight, written to the .pt; ``input``: forward's argument) with shape and dtype, and its
    outputs' shapes and dtypes."""

    code: str
    args: List[Dict[str, Any]]
    outputs: List[Dict[str, Any]]
    multi_output: bool
    imports: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {"args": self.args, "outputs": self.outputs, "multi_output": self.multi_output}


def _ir_dtype(t: torch.Tensor) -> str:
    return ops.DTYPE_NAMES[str(t.dtype).replace("torch.", "")]


def canonical(sub: fx.GraphModule, param_args: List[bool]) -> Spec:
    """The subgraph's code with placeholders renamed ``a<i>`` and values ``v<i>`` in graph order."""
    g = fx.Graph()
    env: Dict[fx.Node, fx.Node] = {}
    args, outputs, multi = [], [], False
    i_arg = i_val = 0
    for n in sub.graph.nodes:
        if n.op == "placeholder":
            v = example_value(n)
            if not _static_tensor(v):
                raise ValueError(f"argument {n.name} is not a static tensor")
            new = g.placeholder(f"a{i_arg}")
            args.append({"name": f"a{i_arg}", "role": "param" if param_args[i_arg] else "input",
                         "shape": list(v.shape), "dtype": _ir_dtype(v)})
            i_arg += 1
        elif n.op == "output":
            res = n.args[0]
            multi = isinstance(res, (tuple, list))
            vals = list(res) if multi else [res]
            for r in vals:
                v = example_value(r) if isinstance(r, fx.Node) else None
                if not _static_tensor(v):
                    raise ValueError("an output is not a static tensor")
                outputs.append({"shape": list(v.shape), "dtype": _ir_dtype(v)})
            g.output(fx.node.map_arg(res, lambda x: env[x]))
            continue
        else:
            new = g.create_node(n.op, n.target, fx.node.map_arg(n.args, lambda x: env[x]),
                                fx.node.map_arg(n.kwargs, lambda x: env[x]), name=f"v{i_val}")
            i_val += 1
        new.meta = dict(n.meta)
        env[n] = new
    code = g.python_code("self")
    unknown = sorted(set(code.globals) - set(_GLOBALS))
    if unknown:
        raise ValueError(f"the graph's code names {unknown}, which a problem file cannot import")
    return Spec(code=code.src, args=args, outputs=outputs, multi_output=multi,
                imports=[_GLOBALS[k] for k in sorted(code.globals, key=lambda k: (k != "torch", k))])


def graph_key(spec: Spec, contract: Dict[str, Any]) -> str:
    """The cache key of a subgraph: its canonical code, its arguments and outputs, the contract
    (profile, policy) and this package's version. Weight values are not in it: a library binds
    whatever weights it is given."""
    doc = {"code": spec.code, "spec": spec.to_json(), "contract": contract, "version": __version__}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


PROBLEM = '''"""generated by ucutlass from a torch.compile graph ({origin}); do not edit.

One subgraph the μCUTLASS language covers, as a KernelBench problem: Model's parameters are the
graph's weights ({weights}), forward's arguments the graph's other inputs.
"""
{imports}
import torch.nn as nn

WEIGHTS = {weights!r}

{code}

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        # On the device Model() is built for (the worker builds it under torch.device("cuda"),
        # where a Parameter over a CPU tensor is refused).
        weights = torch.load(WEIGHTS, map_location=torch.empty(0).device)
{params}
    def forward(self{input_args}):
        out = _graph(None{graph_args})
        return out[0] if isinstance(out, tuple) and len(out) == 1 else out


def get_inputs():
{load_inputs}    return [{inputs}]


def get_init_inputs():
    return []
'''


def write_problem(spec: Spec, values: List[torch.Tensor], directory: str, stem: str, origin: str = "") -> str:
    """Writes ``<directory>/<stem>.py``, ``<stem>.pt`` and, for non-floating inputs,
    ``<stem>.inputs.pt`` (``values``: the graph's arguments, in order) and returns the .py path. Floating-point inputs are drawn afresh by get_inputs (the
    contract's trials need new data); others (indices, masks) are the saved examples."""
    os.makedirs(directory, exist_ok=True)
    pt = os.path.abspath(os.path.join(directory, stem + ".pt"))
    inputs_pt = os.path.abspath(os.path.join(directory, stem + ".inputs.pt"))
    weights, saved = {}, {}
    params, input_args, graph_args, inputs = [], [], [], []

    def host(v: torch.Tensor) -> torch.Tensor:
        return v.detach().to("cpu").contiguous().clone()

    for a, v in zip(spec.args, values):
        if a["role"] == "param":
            weights[a["name"]] = host(v)
            params.append(f"        self.{a['name']} = nn.Parameter(weights[{a['name']!r}], requires_grad=False)")
            graph_args.append(f"self.{a['name']}")
        else:
            input_args.append(a["name"])
            graph_args.append(a["name"])
            if v.is_floating_point():
                dtype = str(v.dtype).replace("torch.", "")
                inputs.append(f"torch.randn({a['shape']!r}, dtype=torch.{dtype})")
            else:
                saved[a["name"]] = host(v)
                inputs.append(f"saved[{a['name']!r}].clone()")
    torch.save(weights, pt)
    load_inputs = ""
    if saved:
        torch.save(saved, inputs_pt)
        load_inputs = f"    saved = torch.load({inputs_pt!r}, map_location=torch.empty(0).device)\n"
    code = spec.code.replace("def forward(self", "def _graph(self", 1)
    text = PROBLEM.format(origin=origin or stem, weights=pt, imports="\n".join(spec.imports), code=code,
                          load_inputs=load_inputs, params="\n".join(params) or "        del weights",
                          input_args="".join(", " + n for n in input_args),
                          graph_args="".join(", " + n for n in graph_args), inputs=", ".join(inputs))
    path = os.path.join(directory, stem + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(directory, stem + ".json"), "w", encoding="utf-8") as f:
        json.dump(spec.to_json(), f, indent=1)
    return path
