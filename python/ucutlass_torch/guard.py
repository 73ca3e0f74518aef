"""Guard zones around every buffer a candidate writes, and sentinels over the tensors it must not
touch (docs/eval-contract.md §1, "Writes outside the outputs").

A candidate's outputs and its workspace are carved out of one allocation, :class:`Arena`, each
buffer starting on an ``ALIGN``-byte boundary with ``GUARD_BYTES`` of guard zone before the first,
between any two and after the last (plus the padding up to the next boundary). The zones hold
``PATTERN`` bytes from the start; :meth:`Arena.check` after a run raises :class:`OutOfBounds`
naming the zone, the buffer beside it and how far the first changed byte lies from it. A write
that lands further away than a zone reaches other memory: the evaluator keeps the reference's
results out of reach (host memory) and fingerprints what it cannot move (the trial's inputs, the
reference model's state), so such a write is caught by :func:`changed` instead.

The verdict for either is ``rejected`` ("rejected: wrote outside its outputs: ..."): the kernel's
numbers cannot be trusted, whatever they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch

# Bytes of guard zone on each side of every buffer. 4 MiB: a kernel that runs a whole tile or a
# row past its output (the H200 case: 1 MiB past a ReLU's output) stays inside the zone.
GUARD_BYTES = 4 << 20
# Every buffer starts on this boundary, as a fresh allocation of PyTorch's caching allocator does
# (kernels may assume 16-byte TMA or 128-byte vector alignment of their pointers).
ALIGN = 512
# The guard zones' byte: as f32 -2.9e-16, as f16/bf16 a small negative number; neither NaN, zero
# nor a value a kernel writes by accident.
PATTERN = 0xA5


class OutOfBounds(Exception):
    """The candidate wrote outside its outputs: into a guard zone, or into a tensor it was not given."""


def _round_up(n: int, to: int) -> int:
    return (n + to - 1) // to * to


@dataclass
class _Slot:
    name: str      # "output 0 'y'", "the workspace"
    offset: int    # byte offset in the arena
    nbytes: int


class Arena:
    """One allocation holding ``buffers`` ((name, dtype, shape) each) and ``workspace_bytes`` of
    workspace, every one between guard zones of ``guard_bytes`` (default GUARD_BYTES)."""

    def __init__(self, device: torch.device, buffers: Sequence[Tuple[str, torch.dtype, Sequence[int]]],
                 workspace_bytes: int = 0, guard_bytes: Optional[int] = None):
        guard = _round_up(GUARD_BYTES if guard_bytes is None else int(guard_bytes), ALIGN)
        entries = [(name, dt, list(shape)) for name, dt, shape in buffers]
        if workspace_bytes:
            entries.append(("the workspace", torch.uint8, [int(workspace_bytes)]))
        self.slots: List[_Slot] = []
        off = guard
        for name, dt, shape in entries:
            n = 1
            for d in shape:
                n *= int(d)
            nbytes = n * torch.empty((), dtype=dt).element_size()
            self.slots.append(_Slot(name, off, nbytes))
            off += _round_up(nbytes, ALIGN) + guard
        self.guard_bytes = guard
        self.nbytes = off
        self.raw = torch.full((off,), PATTERN, dtype=torch.uint8, device=device)
        self.views = [self.raw[s.offset:s.offset + s.nbytes].view(dt).view(shape)
                      for s, (_, dt, shape) in zip(self.slots, entries)]
        # The zones: before the first buffer, then after each one up to the next (or the end).
        self.zones: List[Tuple[int, int, int]] = [(0, self.slots[0].offset if self.slots else off, 0)]
        for i, s in enumerate(self.slots):
            end = self.slots[i + 1].offset if i + 1 < len(self.slots) else off
            self.zones.append((s.offset + s.nbytes, end, i))

    @property
    def outputs(self) -> List[torch.Tensor]:
        n = len(self.slots) - (1 if self.slots and self.slots[-1].name == "the workspace" else 0)
        return self.views[:n]

    @property
    def workspace(self) -> Optional[torch.Tensor]:
        if self.slots and self.slots[-1].name == "the workspace":
            return self.views[-1]
        return None

    def check(self) -> None:
        """Raises OutOfBounds when a guard zone changed (the caller has synchronized)."""
        if not self.zones:
            return
        flags = torch.stack([self.raw[a:b].ne(PATTERN).any() for a, b, _ in self.zones if b > a])
        if not bool(flags.any()):
            return
        raise OutOfBounds(self.describe_damage())

    def describe_damage(self) -> str:
        parts = []
        total = 0
        for k, (a, b, i) in enumerate(self.zones):
            if b <= a:
                continue
            bad = self.raw[a:b].ne(PATTERN)
            n = int(bad.sum().item())
            if not n:
                continue
            total += n
            first = int(bad.nonzero()[0, 0].item())
            last = int(bad.nonzero()[-1, 0].item())
            if k == 0:
                s = self.slots[0]
                parts.append(f"{n} byte(s) before {s.name} (the farthest {s.offset - a - first} bytes before its start)")
            else:
                s = self.slots[i]
                where = f"after {s.name} (the first {first} bytes past its end, the last {last})"
                parts.append(f"{n} byte(s) {where}")
        return (f"rejected: wrote outside its outputs: {total} byte(s) of the guard zones around the candidate's "
                f"buffers changed: " + "; ".join(parts) +
                f" (each buffer has {self.guard_bytes} bytes of guard zone on each side)")

    def restore(self) -> None:
        """Fills every guard zone with the pattern again (after a reported violation)."""
        for a, b, _ in self.zones:
            if b > a:
                self.raw[a:b].fill_(PATTERN)


def named_state(model: torch.nn.Module) -> Dict[str, torch.Tensor]:
    """The model's parameters and buffers (non-persistent ones too), each storage once."""
    out: Dict[str, torch.Tensor] = {}
    seen = set()
    items = list(model.state_dict(keep_vars=True).items()) + list(model.named_buffers())
    for name, t in items:
        if not isinstance(t, torch.Tensor) or name in out:
            continue
        key = (t.device, t.data_ptr(), t.dtype, tuple(t.shape), tuple(t.stride()))
        if key in seen:
            continue
        seen.add(key)
        out[name] = t.detach()
    return out


def snapshot(named: Dict[str, torch.Tensor],
             fingerprints: Callable[[List[torch.Tensor]], List[tuple]]) -> Dict[str, tuple]:
    """Fingerprints of ``named``'s tensors (correctness.fingerprints: a digest of their bits, all
    read at once)."""
    return dict(zip(named, fingerprints(list(named.values()))))


def changed(named: Dict[str, torch.Tensor], snap: Dict[str, tuple],
            fingerprints: Callable[[List[torch.Tensor]], List[tuple]]) -> List[str]:
    """The names whose bits differ from ``snap``."""
    keys = [k for k in named if k in snap]
    return [k for k, fp in zip(keys, fingerprints([named[k] for k in keys])) if fp != snap[k]]
