"""Kernel libraries as ``torch.library`` custom ops (docs/python.md, "Custom ops").

Every library becomes the op ``torch.ops.ucutlass.<name>``: its tensors argument is the library's
``in`` tensors (forward's order) followed by its ``param`` tensors (declaration order), and it
returns the library's ``out`` tensors in their declared shapes, in output order. The fake (meta)
implementation is built from ``ucut_describe()``: the declared output shapes and dtypes, with the
binding rules checked on the inputs' shapes (runtime.check_declared), so a graph calling the op
traces under ``torch.compile(fullgraph=True)`` and ``torch.export`` without running a kernel.

``<name>`` is the library's program name, made an identifier, then the first 12 hex digits of its
program hash: two libraries of one name at two shapes are two ops (their fake outputs differ),
and loading the same library again reuses its op. The real implementation runs the library through
runtime.py on PyTorch's current stream; :class:`StandIn` runs a Python function instead (CPU tests,
or a user's reference while a search runs).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from . import runtime, torch_stages

NAMESPACE = "ucutlass"
_OPS: Dict[str, "LibraryOp"] = {}  # op name -> the op's current library


class StandIn:
    """A library stand-in: ``fn(args)`` gets ucut_run's tensor list (ins, params, outs in declaration
    order, each in its declared shape) and writes the outputs in place. Same interface as
    runtime.Library (``describe``, ``tensors``, ``workspace_bytes``, ``run``)."""

    def __init__(self, describe: Dict[str, Any], fn: Callable[[List[torch.Tensor]], None], workspace_bytes: int = 0):
        self.describe = describe
        self.tensors = runtime.declared_tensors(describe)
        self.workspace_bytes = workspace_bytes
        self.fn = fn
        self.path = "<stand-in>"

    def run(self, args: List[torch.Tensor], workspace: Optional[torch.Tensor]) -> None:
        self.fn(args)


def op_name(describe: Dict[str, Any]) -> str:
    base = re.sub(r"[^0-9A-Za-z_]", "_", str(describe.get("name") or "kernel")).strip("_") or "kernel"
    if base[0].isdigit():
        base = "k_" + base
    digest = re.sub(r"[^0-9a-f]", "", str(describe.get("program_hash", "")).lower())[:12]
    return f"{base}_{digest}" if digest else base


class LibraryOp:
    """One library behind ``torch.ops.ucutlass.<name>``. Call it with the inputs (forward's order)
    and the params (binding key -> tensor); :attr:`op` is the registered op itself."""

    def __init__(self, lib: Any, name: str):
        self.lib = lib
        self.name = name
        self.tensors = lib.tensors
        self.ins = sorted((t for t in self.tensors if t["role"] == "in"), key=lambda t: t["index"])
        self.params = [t for t in self.tensors if t["role"] == "param"]
        self.param_keys = [t["binding"] for t in self.params]
        self.outs = runtime.outputs_of(self.tensors)
        if not self.outs:
            raise runtime.BindError(f"{name}: the library has no out tensor")
        self.workspaces = runtime.Workspaces(lib.workspace_bytes)
        self.op = getattr(getattr(torch.ops, NAMESPACE), name)

    @property
    def qualname(self) -> str:
        return f"{NAMESPACE}::{self.name}"

    def arguments(self, inputs: Sequence[torch.Tensor], params: Dict[str, torch.Tensor]) -> List[torch.Tensor]:
        try:
            return list(inputs) + [params[key] for key in self.param_keys]
        except KeyError:
            missing = [key for key in self.param_keys if key not in params]
            raise runtime.BindError(f"{self.qualname}: no tensor for the param binding(s) {missing}") from None

    def __call__(self, inputs: Sequence[torch.Tensor], params: Dict[str, torch.Tensor]) -> List[torch.Tensor]:
        return self.op(self.arguments(inputs, params))

    def split(self, tensors: Sequence[torch.Tensor]):
        n = len(self.ins)
        if len(tensors) != n + len(self.params):
            raise runtime.BindError(f"{self.qualname} takes {n} input(s) and {len(self.params)} param(s), "
                                    f"{len(tensors)} tensor(s) given")
        return list(tensors[:n]), dict(zip(self.param_keys, tensors[n:]))

    def impl(self, tensors: Sequence[torch.Tensor]) -> List[torch.Tensor]:
        inputs, params = self.split(tensors)
        return runtime.call(self.lib, inputs, params, self.workspaces)

    def fake(self, tensors: Sequence[torch.Tensor]) -> List[torch.Tensor]:
        inputs, params = self.split(tensors)
        for spec, x in zip(self.ins, inputs):
            runtime.check_declared(spec, x, f"{self.qualname} input {spec['name']!r}")
        for spec in self.params:
            runtime.check_declared(spec, params[spec["binding"]], f"{self.qualname} param {spec['name']!r}")
        device = tensors[0].device if tensors else torch.device("cuda")
        return [torch.empty(o["shape"], dtype=runtime.DTYPES[o["dtype"]], device=device) for o in self.outs]


_LIBRARY: Optional[torch.library.Library] = None  # the ucutlass namespace's op definitions


def _define(name: str) -> None:
    """Defines ucutlass::<name> once per process; its implementations look up the op's current
    library, so loading the library again (a new path, the same program) rebinds it.

    The op is defined with ``torch.library.Library`` (a schema, a CPU and a CUDA kernel and a fake)
    rather than ``torch.library.custom_op``: the same op to the dispatcher, Dynamo, Inductor and
    ``torch.export``, but a call costs about 5 µs of dispatch instead of 13 µs on the CPU machine
    (docs/python.md, "The runtime"), paid by every kernel part on every forward. No autograd
    formula is registered (inference graphs), as before."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = torch.library.Library(NAMESPACE, "FRAGMENT")

    def real(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
        return _OPS[name].impl(tensors)

    def fake(tensors: List[torch.Tensor]) -> List[torch.Tensor]:
        return _OPS[name].fake(tensors)

    _LIBRARY.define(f"{name}(Tensor[] tensors) -> Tensor[]")
    for key in ("CPU", "CUDA"):
        _LIBRARY.impl(name, real, key)
    torch.library.register_fake(f"{NAMESPACE}::{name}", fake, lib=_LIBRARY)


def register(lib: Any, name: Optional[str] = None) -> LibraryOp:
    """``lib`` (a runtime.Library or a :class:`StandIn`) as ``torch.ops.ucutlass.<name>``."""
    name = name or op_name(lib.describe)
    if name not in _OPS and not hasattr(getattr(torch.ops, NAMESPACE), name):
        _define(name)
    entry = LibraryOp(lib, name)
    _OPS[name] = entry
    return entry


def load(path: str, name: Optional[str] = None) -> LibraryOp:
    """Loads the kernel library at ``path`` through the runtime (its torch stages included) and
    registers its op."""
    lib = runtime.Library(path)
    if lib.describe.get("torch_stages"):
        lib.set_stage_source(torch_stages.library_source(lib.describe))
    return register(lib, name)


class KernelCall(torch.nn.Module):
    """A module that runs one library op: ``forward(*inputs)`` passes its own params (the
    library's param bindings, as buffers of this module) and returns the outputs in ``shapes``
    (the reference's; the library may declare another shape of the same element count), a tuple
    when there are several, or always when ``as_tuple``."""

    def __init__(self, op: LibraryOp, params: Dict[str, torch.Tensor], shapes: Optional[List[List[int]]] = None,
                 as_tuple: bool = False):
        super().__init__()
        self.library_op = op
        self.keys = []
        for i, spec in enumerate(op.params):
            key = f"p{i}"
            self.register_buffer(key, params[spec["binding"]].detach(), persistent=True)
            self.keys.append((spec["binding"], key))
        self.shapes = [list(s) for s in shapes] if shapes is not None else [o["shape"] for o in op.outs]
        for o, s in zip(op.outs, self.shapes):
            if math.prod(s) != math.prod(o["shape"]):
                raise runtime.BindError(f"{op.qualname}: output {o['name']!r} {o['shape']} cannot be {s}")
        self.as_tuple = as_tuple

    def forward(self, *inputs):
        params = {binding: getattr(self, key) for binding, key in self.keys}
        outs = self.library_op([x for x in inputs if isinstance(x, torch.Tensor)], params)
        outs = [o.view(s) for o, s in zip(outs, self.shapes)]
        return tuple(outs) if self.as_tuple or len(outs) != 1 else outs[0]
