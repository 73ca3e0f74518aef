"""How a kernel library's declared tensors meet a problem's tensors (docs/kernel-abi.md), in one
place for the two programs that call a library: the evaluation worker (kernel.bind, kernel.BoundCall)
and the exported KernelBench ModelNew (export.py embeds this file's source and runs it). Whatever
the worker accepts, the export accepts, and the export returns what the reference returns.

- A tensor binds when its dtype is the declared one and its shape is the declared one or another
  shape of the same element count: the library reads the contiguous tensor in its declared shape
  (the lowering declares e.g. a LayerNorm input [B, C, H, W] as [B*C, H*W], a batched matmul's
  [8, 256, 512, 256] as [2048, 512, 256], a per-channel [C] as [C, 1, 1]).
- An output the library declares in another shape of the same element count (a 0-d loss as [1],
  a row reduction's (128,) as [128, 1]) is returned in the reference's shape and dtype.

Only torch is imported, and the text stays within what KernelBench's static checker accepts in a
solution file (no error handlers), because export.py copies it into model_new.py as it is.
"""

import math

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
          "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
          "u8": torch.uint8, "bool": torch.bool}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}


class BindError(ValueError):
    """A problem's tensor does not fit the library's declaration (names the tensor and why)."""


def dtype_name(dt):
    return DTYPE_NAMES.get(dt, str(dt).replace("torch.", ""))


def check_declared(spec, t, what):
    """Raises BindError unless ``t`` binds to ``spec`` (same dtype; the declared shape or another
    of the same element count)."""
    shape = list(spec["shape"])
    if list(t.shape) != shape and t.numel() != math.prod(shape):
        raise BindError(f"{what}: kernel expects shape {shape} ({math.prod(shape)} elements), "
                        f"the problem has {list(t.shape)} ({t.numel()} elements)")
    if t.dtype != DTYPES[spec["dtype"]]:
        raise BindError(f"{what}: kernel expects {spec['dtype']}, the problem has {dtype_name(t.dtype)}")


def as_declared(spec, t, what):
    """``t`` as the library reads it: contiguous, viewed in the declared shape (checked first)."""
    check_declared(spec, t, what)
    return t.contiguous().view(spec["shape"])


def as_reference(out, shape, dtype_id):
    """A library output in the reference's shape (same element count, row-major) and dtype
    (``dtype_id``: a DTYPES name); a dtype that differs is converted."""
    shape = list(shape)
    if out.numel() != math.prod(shape):
        raise BindError(f"the kernel's output {list(out.shape)} ({out.numel()} elements) cannot be the reference's "
                        f"{shape} ({math.prod(shape)} elements)")
    dt = DTYPES[dtype_id]
    out = out.view(shape)
    return out if out.dtype == dt else out.to(dt)
