"""The evaluator's memory plan (docs/eval-contract.md, "Memory"): what one evaluation under the
contract holds at its peak, estimated from the problem's own tensors when the worker loads it, set
against the memory that is free. A problem that cannot fit is refused up front, with the sizes and
the fix, instead of failing with an out-of-memory error on every candidate.

The sizes, measured once per problem by the worker (``measure``):

- I: the inputs (``get_inputs()`` at the timing seed);
- O: the reference forward's outputs;
- P: the model's parameters and buffers (a bound candidate holds its own copy of each);
- F: the eager forward's own peak above what was allocated before it, outputs included
  (``torch.cuda.max_memory_allocated`` around one forward; O on a CPU, which keeps no such count).

The peak of a correctness trial (correctness.check) is the trial's inputs and the clone one party
runs on (2I), the candidate's NaN-filled output buffers (O, allocated once and reused, between guard
zones), and either the reference's output (O, reference first) or the reference forward running
beside the candidate's buffers (F, candidate first): ``2I + O + max(O, F)``. Beside it live the
candidate's parameter copies (P), the L2-flush buffer, the comparison's bounded scratch (it compares
in chunks) and the guard zones (``guard.GUARD_BYTES`` before the first buffer and after each
output and the workspace). On a GPU the reference's outputs move to host memory as soon as they are
made, out of any kernel's reach: the host holds one trial's (O; the degenerate test's copy of the
previous trial's is the same tensors, or dropped once two trials differ). Above STASH_MAX_BYTES of
outputs nothing is kept ("after"): the reference runs again after the candidate, beside its buffers
(F, within the same peak), and the host holds a strided sample of each output. On a CPU they stay
where they are, with the previous trial's beside them (O more). Timing, the re-check and the
baselines hold less than a trial.
"""

from __future__ import annotations

import gc
import os
from dataclasses import asdict, dataclass
from typing import Any, Dict, Iterable, Tuple

import torch

from . import correctness

# Kept free of the estimate: the caching allocator rounds blocks up and fragments, and the
# estimate is of tensors, not of every byte the CUDA runtime takes.
HEADROOM = 0.05

# Reference outputs larger than this (all outputs together) are not moved to the host and back in
# every trial (pageable transfers: about 7 GPU-s per GiB of outputs over a whole evaluation, run
# CD in docs/benchmarks.md); the reference runs again after the candidate instead (keep_on "after").
STASH_MAX_BYTES = 64 << 20


@dataclass
class Sizes:
    inputs: int          # I
    outputs: int         # O
    params: int          # P
    forward_peak: int    # F


@dataclass
class MemoryPlan:
    fits: bool
    keep_on: str             # "host" | "device" | "after": where the reference's outputs are kept (host on
                             # a GPU; "after": nowhere, made again after the candidate's last run)
    need_bytes: int          # device bytes the evaluation needs beyond what is allocated at planning
    free_bytes: int          # free device memory at planning
    total_bytes: int
    sizes: Sizes
    message: str = ""        # why it does not fit, naming the sizes and the fix; "" when it fits

    def to_json(self) -> Dict[str, Any]:
        return asdict(self)


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB" if abs(n) >= 2**30 else f"{n / 2**20:.0f} MiB"


def tensor_bytes(values: Iterable[Any]) -> int:
    """Bytes of the distinct tensors among ``values`` (a tensor seen twice counts once)."""
    seen = set()
    total = 0
    for v in values:
        if isinstance(v, torch.Tensor) and id(v) not in seen:
            seen.add(id(v))
            total += v.nelement() * v.element_size()
    return total


def _fix(where: str) -> str:
    return f"free the {where} of other processes, use one with more memory, or make get_inputs() smaller"


def guard_bytes(n_outputs: int) -> int:
    """The guard zones of a candidate with ``n_outputs`` outputs and a workspace (guard.Arena)."""
    from . import guard

    return (n_outputs + 2) * guard.GUARD_BYTES


def plan(sizes: Sizes, free: int, total: int, host_free: int, flush_bytes: int, scratch_bytes: int,
         where: str = "GPU", guards: int = 0) -> MemoryPlan:
    """The plan for ``sizes`` with ``free`` of ``total`` device bytes free (the model already
    allocated), ``host_free`` bytes of host memory for the reference's outputs (ignored when the
    device is the host, ``where == "host"``), an L2-flush buffer still to allocate, the
    comparison's scratch and ``guards`` bytes of guard zones."""
    i, o, p, f = sizes.inputs, sizes.outputs, sizes.params, sizes.forward_peak
    terms = [("inputs", 2 * i, f"2 x {gib(i)}"), ("candidate outputs", o, gib(o)),
             ("reference outputs or eager forward", max(o, f), gib(max(o, f))),
             ("parameter copies", p, gib(p)), ("L2 flush", flush_bytes, gib(flush_bytes)),
             ("compare chunks", scratch_bytes, gib(scratch_bytes)), ("guard zones", guards, gib(guards))]
    base = sum(t[1] for t in terms)
    if where == "host":  # the previous trial's reference outputs sit beside the rest
        terms.append(("previous reference outputs", o, gib(o)))
        base += o
    usable = int(free * (1 - HEADROOM))
    on_host = where != "host"
    if base <= usable and on_host and o > STASH_MAX_BYTES:
        # Nothing kept: every reference output a verdict rests on is made after the candidate's
        # last run (correctness.check, ref_home="after"); the host holds small samples only.
        return MemoryPlan(True, "after", base, free, total, sizes)
    if base <= usable and (not on_host or o <= int(host_free * (1 - HEADROOM))):
        return MemoryPlan(True, "host" if on_host else "device", base, free, total, sizes)
    if base <= usable:
        why = (f"the reference's outputs ({gib(o)}), kept in host memory out of the candidate's reach, do not fit in "
               f"the {gib(host_free)} of free host memory; free host memory or use a machine with more of it")
    else:
        parts = ", ".join(f"{name} {text}" for name, _, text in terms)
        why = (f"an evaluation under the contract needs about {gib(base)} of {where} memory ({parts}) beyond the "
               f"model, and {gib(free)} of {gib(total)} is free; {_fix(where)}")
    return MemoryPlan(False, "host" if on_host else "device", base, free, total, sizes,
                      f"does not fit in {where} memory: {why}")


def forward_refusal(sizes: Sizes, free: int, total: int, error: str, where: str = "GPU") -> MemoryPlan:
    """The refusal when measuring itself ran out of memory (the inputs or the eager forward)."""
    return MemoryPlan(False, "device", 0, free, total, sizes,
                      f"does not fit in {where} memory: the eager forward alone ran out of memory ({error}); "
                      f"inputs {gib(sizes.inputs)}, parameters {gib(sizes.params)}, {gib(free)} of {gib(total)} "
                      f"free; {_fix(where)}")


def host_available() -> int:
    """Host memory available to new allocations (Linux MemAvailable; 0 when unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def host_total() -> int:
    """The host's physical memory (0 when unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def release(device: torch.device, collect: bool = True) -> None:
    """Returns freed memory to the device: unreachable objects are collected (``collect``: a
    previous problem's module or a compiled baseline may hold tensors in reference cycles; a
    candidate's evaluation makes none, and a collection takes tenths of a second) and the caching
    allocator's idle blocks given back, so the free memory measured next is what a new
    allocation can get and other processes see it free."""
    if collect:
        gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def device_memory(device: torch.device) -> Tuple[int, int]:
    """(free, total) bytes of ``device`` for new tensors: the driver's free memory plus the blocks
    the caching allocator holds idle; the host's memory for a CPU device."""
    if device.type == "cuda":
        free, total = torch.cuda.mem_get_info(device)
        idle = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return int(free + idle), int(total)
    return host_available(), host_total()


@dataclass
class Measured:
    sizes: Sizes
    inputs: list         # [(shape, dtype)] of the tensor inputs
    outputs: list        # [(shape, dtype)] of the outputs
    error: str = ""      # the first line of the out-of-memory error, when measuring ran out


def measure(model: torch.nn.Module, make_inputs, device: torch.device) -> Measured:
    """Runs one eager forward of ``model`` on ``make_inputs()`` and measures the plan's sizes (the
    partial sizes and the error when the inputs or the forward run out of memory)."""
    m = Measured(Sizes(0, 0, tensor_bytes(model.state_dict(keep_vars=True).values()), 0), [], [])
    cuda = device.type == "cuda"
    try:
        inputs = make_inputs()
        m.sizes.inputs = tensor_bytes(inputs)
        m.inputs = [(list(x.shape), x.dtype) for x in inputs if isinstance(x, torch.Tensor)]
        if cuda:
            torch.cuda.synchronize(device)
            torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device) if cuda else 0
        with torch.no_grad():
            outs = correctness.as_list(model(*inputs))
        m.sizes.outputs = tensor_bytes(outs)
        m.sizes.forward_peak = (torch.cuda.max_memory_allocated(device) - before) if cuda else m.sizes.outputs
        m.outputs = [(list(o.shape), o.dtype) for o in outs]
    except torch.cuda.OutOfMemoryError as e:
        m.error = str(e).strip().splitlines()[0]
    return m
