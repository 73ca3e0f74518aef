"""Where a problem's tensors live while ucutlass builds and traces it, whatever device the file names.

KernelBench files move things themselves: `nn.Linear(a, b).cuda()` or `.to(device)` in __init__,
`torch.randn(..., device="cuda")` in get_inputs(), `x.cuda()` or `x.to(w.device)` in forward. The
Problem IR has no devices, and ucutlass builds a problem on a device of its choosing: the meta
device or fake CPU tensors when extracting (no GPU needed), the evaluation GPU in the worker. Two
pieces make such files build there:

- ``Redirect(device)``: a TorchFunctionMode under which every device a call names is ``device``
  (Tensor.cuda()/.cpu() become .to(device), .to()'s device argument and factories' ``device=`` are
  replaced, ``.to(other)`` keeps only other's dtype). Dtype conversions are untouched.
- ``fake_module_conversions()``: nn.Module conversions (``module.half()``, ``.to(torch.bfloat16)``,
  ``.cuda()``) of a module built under a FakeTensorMode. torch swaps each parameter in place with
  torch.utils.swap_tensors, which fails for fake tensors ("_apply(): Couldn't swap Linear.weight");
  inside this context such a module's parameters and buffers are replaced by their converted
  tensors instead (a parameter shared by two modules stays shared).
"""

from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Tuple

import torch
from torch.overrides import TorchFunctionMode

_MOVES = {"cuda", "cpu"}


def redirect(func, args: tuple, kwargs: dict, device) -> Tuple[Any, tuple, dict]:
    """The call with every device it names replaced by ``device`` (see the module docstring). The
    meta device is left alone: torch's own machinery (torch.export) creates meta tensors."""
    name = getattr(func, "__name__", "")
    if name in _MOVES and args and isinstance(args[0], torch.Tensor):
        return torch.Tensor.to, (args[0], device), {"non_blocking": kwargs.get("non_blocking", False)}
    if name == "to" and args and isinstance(args[0], torch.Tensor):
        rest = []
        for a in args[1:]:
            if isinstance(a, torch.Tensor):  # .to(other): other's dtype and device
                rest += [device, a.dtype]
            else:
                rest.append(device if _moves(a) else a)
        if _moves(kwargs.get("device")):
            kwargs = dict(kwargs, device=device)
        return func, (args[0], *rest), kwargs
    if _moves(kwargs.get("device")):
        kwargs = dict(kwargs, device=device)
    return func, args, kwargs


def _moves(a) -> bool:
    """Whether ``a`` names a device other than meta."""
    if isinstance(a, bool) or not isinstance(a, (str, torch.device, int)):
        return False
    try:
        return torch.device(a).type != "meta"
    except (RuntimeError, TypeError):
        return False


class Redirect(TorchFunctionMode):
    """Every device a call names becomes ``device`` (module docstring)."""

    def __init__(self, device):
        super().__init__()
        self.device = torch.device(device)

    def __torch_function__(self, func, types_, args=(), kwargs=None):
        func, args, kwargs = redirect(func, tuple(args), dict(kwargs or {}), self.device)
        return func(*args, **kwargs)


@contextlib.contextmanager
def fake_module_conversions() -> Iterator[None]:
    """nn.Module conversions of modules holding fake tensors (module docstring)."""
    from torch._subclasses.fake_tensor import FakeTensor

    original = torch.nn.Module._apply
    depth = 0
    converted: Dict[int, Tuple[torch.Tensor, torch.Tensor]] = {}  # per conversion: id(old) -> (old, new)

    def _apply(self, fn, recurse=True):
        nonlocal depth
        own = [t for t in (*self._parameters.values(), *self._buffers.values()) if t is not None]
        if not any(isinstance(t, FakeTensor) for t in own):
            depth += 1
            try:
                return original(self, fn, recurse)
            finally:
                depth -= 1
                if depth == 0:
                    converted.clear()
        depth += 1
        try:
            if recurse:
                for child in self.children():
                    child._apply(fn)
            with torch.no_grad():
                for store, is_param in ((self._parameters, True), (self._buffers, False)):
                    for key, t in store.items():
                        if t is None:
                            continue
                        if id(t) not in converted:
                            new = fn(t)
                            if is_param and new is not t:
                                new = torch.nn.Parameter(new, requires_grad=t.requires_grad)
                            converted[id(t)] = (t, new)
                        store[key] = converted[id(t)][1]
            return self
        finally:
            depth -= 1
            if depth == 0:
                converted.clear()

    torch.nn.Module._apply = _apply
    try:
        yield
    finally:
        torch.nn.Module._apply = original
