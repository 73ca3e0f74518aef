"""The kernel library C ABI (docs/kernel-abi.md) seen from the evaluation worker: a library loaded
through the runtime (runtime.py, shared with the custom ops and the exported ModelNew), its
``ucut_describe()`` checked, and binding a reference model's tensors to the library's tensor list.

Two kinds of kernel implement the same small interface (``describe``, ``workspace_bytes``,
``launch``): :class:`CtypesKernel` calls a real library on a CUDA stream, and :class:`PyKernel`
wraps a Python callable so the correctness protocol can be tested on CPU tensors without a GPU.

:func:`bind` turns a description plus a model and its inputs into a :class:`BoundCall`: inputs by
position, parameters/buffers by ``state_dict`` key, outputs allocated here, workspace allocated
once (runtime.py: the rules the exported ModelNew and the custom ops share). Any disagreement (count, shape, dtype,
missing key) is a :class:`BindError` naming the tensor.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from . import binding, guard, runtime
from .runtime import ABI_VERSION, DTYPE_NAMES, DTYPES, ERROR_CODES, BindError, dtype_name  # noqa: F401 - this module's API


class KernelError(Exception):
    """The library could not be loaded, or ucut_run returned a non-zero code."""

    def __init__(self, message: str, code: int = 0):
        super().__init__(message)
        self.code = code


def check_describe(desc: Any, where: str) -> Dict[str, Any]:
    """Validates the parts of a ucut_describe() document the harness relies on."""
    if not isinstance(desc, dict):
        raise KernelError(f"{where}: ucut_describe() is not a JSON object")
    if desc.get("abi") != ABI_VERSION:
        raise KernelError(f"{where}: kernel ABI {desc.get('abi')!r}, this harness reads ABI {ABI_VERSION}")
    tensors = desc.get("tensors")
    if not isinstance(tensors, list):
        raise KernelError(f"{where}: ucut_describe() has no 'tensors' list")
    for i, t in enumerate(tensors):
        if not isinstance(t, dict) or t.get("role") not in ("in", "param", "out"):
            raise KernelError(f"{where}: tensors[{i}] needs role 'in', 'param' or 'out'")
        if t.get("dtype") not in DTYPES:
            raise KernelError(f"{where}: tensors[{i}] ({t.get('name')}) has unknown dtype {t.get('dtype')!r}")
        if not isinstance(t.get("shape"), list):
            raise KernelError(f"{where}: tensors[{i}] ({t.get('name')}) has no shape list")
        if t["role"] == "param" and not isinstance(t.get("binding"), str):
            raise KernelError(f"{where}: param tensor {t.get('name')!r} has no 'binding' (state_dict key)")
    desc.setdefault("scalars", [])
    return desc


class CtypesKernel:
    """A kernel library loaded through the runtime (runtime.Library). ``launch`` enqueues on the
    given CUDA stream; failures are :class:`KernelError` with ucut_run's code."""

    def __init__(self, path: str):
        if not os.path.exists(path):
            raise KernelError(f"{path}: no such kernel library")
        try:
            self.rt = runtime.Library(path)
        except OSError as e:
            raise KernelError(f"{path}: cannot load: {e}") from e
        except (ValueError, UnicodeDecodeError) as e:
            raise KernelError(f"{path}: ucut_describe() is not valid JSON: {e}") from e
        except runtime.LibraryError as e:
            raise KernelError(str(e), e.code) from e
        self.lib = self.rt.lib
        self.path = path
        self.describe = check_describe(self.rt.describe, path)
        self.workspace_bytes = self.rt.workspace_bytes
        # Torch stages (docs/kernel-abi.md): the library calls back into this process to run them;
        # the worker's host keeps a failing stage's message for the error it reports.
        self.host = None
        if self.describe.get("torch_stages"):
            from .torch_stages import Host
            self.host = Host(self.describe)
            try:
                self.rt.set_host(self.host.run)
            except runtime.LibraryError as e:
                raise KernelError(str(e)) from e

    def last_error(self) -> str:
        return self.rt.last_error()

    def _failure(self, rc: int) -> KernelError:
        what = ERROR_CODES.get(rc, "unknown error code")
        detail = self.last_error()
        if self.host is not None and self.host.error:
            detail += f" [{self.host.error}]"
            self.host.error = ""
        return KernelError(f"ucut_run returned {rc} ({what}): {detail}", rc)

    def launch(self, tensors: Sequence[torch.Tensor], scalars: Sequence[float],
               workspace: Optional[torch.Tensor], stream: Any) -> None:
        if self.host is not None:
            self.host.bind(tensors, workspace)
        handle = stream.cuda_stream if stream is not None else None
        rc = self.rt.run_raw(list(tensors), list(scalars), workspace, handle)
        if rc != 0:
            raise self._failure(rc)

    @property
    def times_stages(self) -> bool:
        """Whether the library has ucut_run_timed (libraries generated before it have not)."""
        return self.rt.has_stage_times

    def stage_times(self, tensors: Sequence[torch.Tensor], scalars: Sequence[float],
                    workspace: Optional[torch.Tensor], stream: Any) -> Optional[List[float]]:
        """Each stage's milliseconds in one run (ucut_run_timed; synchronizes), or None where the
        library predates it."""
        if not self.rt.has_stage_times:
            return None
        if self.host is not None:
            self.host.bind(tensors, workspace)
        handle = stream.cuda_stream if stream is not None else None
        rc, ms = self.rt.run_timed_raw(list(tensors), list(scalars), workspace, handle)
        if rc != 0:
            raise self._failure(rc)
        return ms

    def make_launcher(self, tensors, scalars, workspace, stream) -> Callable[[], None]:
        ptrs, sc = self.rt.pointers(tensors, scalars)
        args = (ptrs, len(tensors), sc, len(scalars),
                workspace.data_ptr() if workspace is not None and workspace.numel() else None,
                self.workspace_bytes, stream.cuda_stream if stream is not None else None)
        run = self.lib.ucut_run
        keep = (tensors, ptrs, sc)  # the pointers stay valid while the closure lives
        host = self.host

        def go() -> None:
            if host is not None:
                host.bind(tensors, workspace)
            rc = run(*args)
            if rc != 0:
                _ = keep
                raise self._failure(rc)
        return go


class PyKernel:
    """A stand-in kernel: ``fn(tensors, scalars)`` writes the outputs in place (CPU tests)."""

    def __init__(self, describe: Dict[str, Any], fn: Callable[[List[torch.Tensor], List[float]], None],
                 workspace_bytes: int = 0, path: str = "<python>",
                 stage_ms: Optional[Callable[[], List[float]]] = None):
        self.describe = check_describe(describe, path)
        self.fn = fn
        self.workspace_bytes = workspace_bytes
        self.path = path
        self.stage_ms = stage_ms  # stands in for ucut_run_timed's per-stage times (tests)

    @property
    def times_stages(self) -> bool:
        return self.stage_ms is not None

    def stage_times(self, tensors, scalars, workspace, stream) -> Optional[List[float]]:
        if self.stage_ms is None:
            return None
        self.launch(tensors, scalars, workspace, stream)
        return list(self.stage_ms())

    def launch(self, tensors, scalars, workspace, stream) -> None:
        rc = self.fn(list(tensors), list(scalars))
        if isinstance(rc, int) and rc:
            raise KernelError(f"fake kernel returned {rc}", int(rc))


@dataclass
class BoundCall:
    """A kernel bound to one problem: ``run(inputs)`` launches it into its output buffers, NaN-filled.

    The outputs and the workspace live in one :class:`guard.Arena` (allocated on first use and
    reused by every run, docs/eval-contract.md "Memory"), between guard zones that
    :meth:`check_guards` inspects after a run."""

    kernel: Any
    params: Dict[str, torch.Tensor]           # binding key -> contiguous tensor on device
    out_specs: List[Dict[str, Any]]           # out tensors in out-index order
    order: List[Any]                          # per ABI position: ("in", i) | ("param", key) | ("out", i)
    scalars: List[float]
    device: torch.device
    in_specs: List[Dict[str, Any]] = field(default_factory=list)
    workspace_bytes: int = 0
    guard_bytes: Optional[int] = None         # guard.GUARD_BYTES unless given
    arena: Optional[guard.Arena] = None

    @property
    def outputs(self) -> List[torch.Tensor]:
        return self.arena.outputs if self.arena is not None else []

    @property
    def workspace(self) -> Optional[torch.Tensor]:
        return self.arena.workspace if self.arena is not None else None

    def alloc_outputs(self) -> List[torch.Tensor]:
        """The output buffers (and the workspace), allocated once per binding between guard zones
        and reused by every run (the evaluator holds one set of candidate outputs)."""
        if self.arena is None:
            self.arena = guard.Arena(self.device, [(f"output {s['index']} {s.get('name', '')!r}", DTYPES[s["dtype"]],
                                                    s["shape"]) for s in self.out_specs],
                                     self.workspace_bytes, self.guard_bytes)
        return self.outputs

    def poison_outputs(self) -> None:
        """Fills every output with NaN (integers: the dtype's max; bool: True): an element the
        kernel leaves unwritten can never equal the reference by luck, nor keep a value from an
        earlier run. The timing loop calls it before every repetition, outside the timed events."""
        for o in self.alloc_outputs():
            poison(o)

    def check_guards(self) -> None:
        """Raises guard.OutOfBounds when the last runs wrote into a guard zone (after a sync); the
        zones are refilled, so a later check reports only later writes."""
        if self.arena is None:
            return
        try:
            self.arena.check()
        except guard.OutOfBounds:
            self.arena.restore()
            raise

    def _tensors(self, tensor_inputs: Sequence[torch.Tensor]) -> List[torch.Tensor]:
        outs = self.alloc_outputs()
        return [tensor_inputs[key] if kind == "in" else self.params[key] if kind == "param" else outs[key]
                for kind, key in self.order]

    def run(self, inputs: Sequence[Any], stream: Any = None) -> List[torch.Tensor]:
        """One launch into the output buffers, each filled with NaN first (:meth:`poison_outputs`)."""
        self.poison_outputs()
        lst = self._tensors([x for x in inputs if isinstance(x, torch.Tensor)])
        self.kernel.launch(lst, self.scalars, self.workspace, stream)
        return self.outputs

    def launcher(self, inputs: Sequence[Any], stream: Any = None) -> Callable[[], None]:
        """A zero-argument launch into fixed output buffers (no poisoning: the timing loop
        poisons them outside its timed events). Arguments are marshalled once, so the timed call
        is only the library call."""
        lst = self._tensors([x for x in inputs if isinstance(x, torch.Tensor)])
        make = getattr(self.kernel, "make_launcher", None)
        if make is not None:
            return make(lst, self.scalars, self.workspace, stream)
        return lambda: self.kernel.launch(lst, self.scalars, self.workspace, stream)

    @property
    def times_stages(self) -> bool:
        """Whether the kernel can time its stages (a library with ucut_run_timed)."""
        return bool(getattr(self.kernel, "times_stages", False))

    def stage_times(self, inputs: Sequence[Any], stream: Any = None, reps: int = 3,
                    prepare: Optional[Callable[[], None]] = None) -> Optional[List[float]]:
        """Each stage's median milliseconds over ``reps`` runs (docs/kernel-abi.md, "Per-stage
        times"), the outputs NaN-filled and ``prepare`` (the L2 flush) called before each run, as in
        the timing loop; None where the kernel cannot time its stages (:attr:`times_stages`)."""
        if not self.times_stages:
            return None
        lst = self._tensors([x for x in inputs if isinstance(x, torch.Tensor)])
        runs = []
        for _ in range(max(1, reps)):
            self.poison_outputs()
            if prepare is not None:
                prepare()
            runs.append(self.kernel.stage_times(lst, self.scalars, self.workspace, stream))
        return [statistics.median(r[i] for r in runs) for i in range(len(runs[0]))]

    def check_inputs(self, inputs: Sequence[Any]) -> List[torch.Tensor]:
        """Inputs made contiguous and viewed in the description's shapes (binding.as_declared)."""
        tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
        if len(tensors) != len(self.in_specs):
            raise BindError(f"the kernel takes {len(self.in_specs)} input tensor(s), get_inputs() gives {len(tensors)}")
        return [binding.as_declared(spec, t, f"input {spec.get('name')!r} (index {spec['index']})")
                for spec, t in zip(self.in_specs, tensors)]


def poison(t: torch.Tensor) -> None:
    if t.is_floating_point():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        t.fill_(torch.iinfo(t.dtype).max)


def _by_index(specs: List[Dict[str, Any]], role: str) -> List[Dict[str, Any]]:
    seen = sorted(specs, key=lambda s: s.get("index", 0))
    for i, s in enumerate(seen):
        if s.get("index", i) != i:
            raise BindError(f"{role} tensors' indices are not 0..{len(seen) - 1} (found {s.get('index')})")
    return seen


def bind(kernel: Any, model: torch.nn.Module, device: torch.device,
         scalars: Optional[Sequence[float]] = None) -> BoundCall:
    """Binds the kernel's tensor list to ``model``'s state_dict; inputs and outputs are checked per
    call. Parameters are copied to contiguous device tensors (the kernel never sees the model's own
    storage, so a kernel writing its parameters cannot change the reference)."""
    desc = kernel.describe
    tensors = desc["tensors"]
    state = model.state_dict()
    # buffers registered with persistent=False are not in state_dict but are the model's tensors
    for name, b in model.named_buffers():
        state.setdefault(name, b)
    params: Dict[str, torch.Tensor] = {}
    order: List[Any] = []
    ins = [t for t in tensors if t["role"] == "in"]
    outs = [t for t in tensors if t["role"] == "out"]
    in_specs = _by_index([dict(t, index=t.get("index", i)) for i, t in enumerate(ins)], "in")
    out_specs = _by_index([dict(t, index=t.get("index", i)) for i, t in enumerate(outs)], "out")
    if not out_specs:
        raise BindError("the kernel has no out tensor")
    for i, t in enumerate(tensors):
        if t["role"] == "in":
            order.append(("in", t.get("index", ins.index(t))))
        elif t["role"] == "out":
            order.append(("out", t.get("index", outs.index(t))))
        else:
            key = t["binding"]
            if key not in state:
                from difflib import get_close_matches
                close = get_close_matches(key, list(state), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; the model has {sorted(state)[:8]}"
                raise BindError(f"param {t.get('name')!r} binds state_dict key {key!r}, which the model lacks{hint}")
            value = binding.as_declared(t, state[key].detach(), f"param {t.get('name')!r} ({key})")
            params[key] = value.to(device).clone()
            order.append(("param", key))
    sc_specs = desc.get("scalars", [])
    if scalars is None:
        scalars = [float(s.get("default", 0.0)) for s in sc_specs]
    if len(scalars) != len(sc_specs):
        raise BindError(f"the kernel takes {len(sc_specs)} scalar(s), {len(scalars)} given")
    return BoundCall(kernel=kernel, params=params, out_specs=out_specs, order=order,
                     scalars=[float(s) for s in scalars], device=device, in_specs=in_specs,
                     workspace_bytes=int(kernel.workspace_bytes or 0))
