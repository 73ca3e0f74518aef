"""Convolution on Hopper before the conv stage exists (issue 38, item 6): cuDNN as PyTorch runs it
against channels-last cuDNN and CUTLASS's SM90 implicit-GEMM fprop, in time and in error.

For every shape (KernelBench level-1-like; SHAPES below), the columns are:

  ref            cuDNN, NCHW fp32, TF32 allowed: PyTorch's default and the contract's reference
  nchw_fp32      cuDNN, NCHW fp32, TF32 off
  cl_tf32        cuDNN, channels-last fp32, TF32 allowed
  cl_bf16        cuDNN, channels-last bf16 (bf16 output)
  cutlass_tf32   CUTLASS SM90 fprop, NHWC fp32 (TF32 MMA), fp32 output
  cutlass_bf16   CUTLASS SM90 fprop, NHWC bf16, bf16 output
  cutlass_bf16f32  the same with bf16 inputs and an fp32 output
  x_to_cl, y_to_nchw  the layout changes a channels-last kernel needs around it (fp32 copies)

Layout and dtype conversions of the inputs happen outside the timed region (x_to_cl/y_to_nchw time
them separately); a CUTLASS column is the fastest of its libraries (tile shapes) and names it.
Each column's output is compared with the same conv in float64 (on the GPU): max|y-y64| and
max|y-y64|/max|y64|; with the fp32 TF32 reference by allclose at rtol=atol=1e-4 (the default
profile) and 1e-2 (kb-v01); and the default profile's verdict: elementwise, float64 (the
reference-class pass: max|y-y64| no larger than the reference's own) or fail. Timing is the
contract's protocol (ucutlass_torch.timing: warm-up, L2 flushed before each repetition, CUDA
events, median of >= 20). Writes results.json (after every shape) and table.md to OUT.

    python3 bench/conv/measure.py OUT [--libs .carry/conv] [--only REGEX] [--budget-s 200]
    python3 bench/conv/measure.py OUT --cpu      # no GPU: small shapes on the CPU, same code path

Exit status 3 when a CUDA error left the context unusable: results.json holds what was done, and
``--resume`` continues after the shape that failed (run.sh does this).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import glob
import json
import math
import os
import re
import subprocess
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from ucutlass_torch import timing  # noqa: E402

SEED = 42
CONTEXT_LOST = 3

# Peak rates (dense) and HBM bandwidth, per GPU; an H100 is recognised by its name, anything else
# uses the H200's. TF32 and BF16 are the SXM tensor-core peaks, FP32 the CUDA-core one.
PEAKS = {
    "H200": {"tf32": 494.7e12, "bf16": 989.4e12, "fp32": 66.9e12, "bw": 4.8e12},
    "H100": {"tf32": 494.7e12, "bf16": 989.4e12, "fp32": 66.9e12, "bw": 3.35e12},
}


@dataclass(frozen=True)
class Shape:
    """One convolution: PyTorch's NC(D)(H)W input [n, c, *x], filter extents f, per spatial dim
    stride, pad and dil. kind: conv (groups 1), depthwise (groups = c = k) or transposed
    (ConvTranspose, weight [c, k, *f], out_pad its output_padding)."""
    name: str
    like: str
    kind: str
    n: int
    c: int
    k: int
    x: Tuple[int, ...]
    f: Tuple[int, ...]
    stride: Tuple[int, ...]
    pad: Tuple[int, ...]
    dil: Tuple[int, ...]
    out_pad: Tuple[int, ...] = ()

    @property
    def rank(self) -> int:
        return len(self.x)

    @property
    def groups(self) -> int:
        return self.c if self.kind == "depthwise" else 1

    def out(self) -> Tuple[int, ...]:
        if self.kind == "transposed":
            op = self.out_pad or (0,) * self.rank
            return tuple((i - 1) * s - 2 * p + d * (f - 1) + o + 1
                         for i, s, p, d, f, o in zip(self.x, self.stride, self.pad, self.dil, self.f, op))
        return tuple((i + 2 * p - d * (f - 1) - 1) // s + 1
                     for i, s, p, d, f in zip(self.x, self.stride, self.pad, self.dil, self.f))

    def weight_shape(self) -> Tuple[int, ...]:
        if self.kind == "transposed":
            return (self.c, self.k, *self.f)
        return (self.k, self.c // self.groups, *self.f)

    def elems(self) -> Tuple[int, int, int]:
        """(input, weight, output) element counts."""
        return (self.n * self.c * math.prod(self.x), math.prod(self.weight_shape()),
                self.n * self.k * math.prod(self.out()))

    def flops(self) -> int:
        """2 x MACs; a transposed conv's MACs are those of the direct conv it is the adjoint of."""
        taps = math.prod(self.f) * (self.c // self.groups)
        if self.kind == "transposed":
            return 2 * self.n * self.c * math.prod(self.x) * self.k * math.prod(self.f)
        return 2 * self.n * self.k * math.prod(self.out()) * taps

    def shrunk(self) -> "Shape":
        """A small copy for --cpu: batch 1, spatial extents cut to a few filter widths."""
        x = tuple(max(f * d + 2, min(i, 3 * f * d + 5)) for i, f, d in zip(self.x, self.f, self.dil))
        return Shape(self.name, self.like, self.kind, 1, min(self.c, 16), min(self.k, 16) if self.kind != "depthwise"
                     else min(self.c, 16), x, self.f, self.stride, self.pad, self.dil, self.out_pad)


def S(name, like, kind, n, c, k, x, f, stride=None, pad=None, dil=None, out_pad=()) -> Shape:
    r = len(x)
    return Shape(name, like, kind, n, c, k, tuple(x), tuple(f), tuple(stride or (1,) * r), tuple(pad or (0,) * r),
                 tuple(dil or (1,) * r), tuple(out_pad))


# KernelBench level 1's categories at or near its sizes (halved where a float64 reference or the
# 4-minute budget asked for it; `like` names the problems a row stands for). No bias anywhere.
SHAPES: List[Shape] = [
    S("c2d_k11s4_cin3", "50", "conv", 256, 3, 96, (224, 224), (11, 11), (4, 4), (2, 2)),
    S("c2d_cin3_256", "54-like 2D", "conv", 16, 3, 64, (256, 256), (3, 3)),
    S("c2d_64to128_256", "55 62", "conv", 16, 64, 128, (256, 256), (3, 3)),
    S("c2d_16to128_512", "63 (1024->512)", "conv", 16, 16, 128, (512, 512), (3, 3)),
    S("c2d_256to256_64_p1", "L2/L3 ResNet-like", "conv", 16, 256, 256, (64, 64), (3, 3), pad=(1, 1)),
    S("c2d_asym_k3x7", "56 (asymmetric)", "conv", 8, 64, 128, (128, 256), (3, 7), pad=(1, 3)),
    S("c2d_strided_s2", "strided", "conv", 16, 64, 128, (256, 256), (3, 3), (2, 2), (1, 1)),
    S("c2d_dilated_d2", "80 (dilated)", "conv", 8, 64, 128, (256, 256), (3, 3), pad=(2, 2), dil=(2, 2)),
    S("c2d_pointwise", "87 (1024->512)", "conv", 16, 64, 128, (512, 512), (1, 1)),
    S("c1d_k3", "67", "conv", 32, 64, 128, (65536,), (3,)),
    S("c1d_k3_s3_d4", "76 (524280->262144)", "conv", 16, 64, 128, (262144,), (3,), (3,), dil=(4,)),
    S("c3d_cin3_k357", "60", "conv", 16, 3, 64, (64, 64, 64), (3, 5, 7)),
    S("c3d_32to64", "54 59 66", "conv", 8, 32, 64, (32, 64, 64), (3, 3, 3), pad=(1, 1, 1)),
    S("dw2d_k3", "84 (batch 64->16)", "depthwise", 16, 128, 128, (256, 512), (3, 3), pad=(1, 1)),
    S("ct2d_s1", "57 (1024->256)", "transposed", 8, 64, 64, (256, 256), (3, 3)),
    S("ct2d_s2", "L2 #2-like", "transposed", 16, 64, 64, (128, 128), (3, 3), (2, 2), (1, 1), out_pad=(1, 1)),
]


@dataclass
class Column:
    name: str
    backend: str      # cudnn | cutlass | layout
    precision: str    # tf32 | fp32 | bf16 | bf16f32 (bf16 in, fp32 out)
    layout: str       # nchw | cl
    what: str


COLUMNS = [
    Column("ref", "cudnn", "tf32", "nchw", "cuDNN NCHW fp32, TF32 allowed (PyTorch's default; the reference)"),
    Column("nchw_fp32", "cudnn", "fp32", "nchw", "cuDNN NCHW fp32, TF32 off"),
    Column("cl_tf32", "cudnn", "tf32", "cl", "cuDNN channels-last fp32, TF32 allowed"),
    Column("cl_bf16", "cudnn", "bf16", "cl", "cuDNN channels-last bf16 (bf16 out)"),
    Column("cutlass_tf32", "cutlass", "tf32", "cl", "CUTLASS SM90 fprop NHWC, TF32 MMA, fp32 out"),
    Column("cutlass_bf16", "cutlass", "bf16", "cl", "CUTLASS SM90 fprop NHWC bf16, bf16 out"),
    Column("cutlass_bf16f32", "cutlass", "bf16f32", "cl", "CUTLASS SM90 fprop NHWC bf16, fp32 out"),
]
LAYOUT_COLUMNS = [("x_to_cl", "input NCHW -> channels-last fp32 copy"),
                  ("y_to_nchw", "output channels-last -> NCHW fp32 copy")]


# ---------------------------------------------------------------------------------------------
# Problems and the ways to run them


def make_inputs(s: Shape, dev: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
    """KernelBench's inputs: x ~ U[0,1); the weight as nn.Conv*'s default init, U(+-1/sqrt(fan_in))."""
    g = torch.Generator(device=dev).manual_seed(SEED)
    x = torch.rand((s.n, s.c, *s.x), generator=g, device=dev)
    wshape = s.weight_shape()
    fan_in = math.prod(wshape[1:])  # PyTorch's fan_in: dim 1 times the kernel, for both kinds
    w = (torch.rand(wshape, generator=g, device=dev) * 2 - 1) / math.sqrt(fan_in)
    return x, w


def torch_conv(s: Shape, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    if s.kind == "transposed":
        fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[s.rank]
        return fn(x, w, None, s.stride, s.pad, s.out_pad or 0, 1, s.dil)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[s.rank]
    return fn(x, w, None, s.stride, s.pad, s.dil, s.groups)


def as_2d(s: Shape) -> Shape:
    """A 1-D conv as the 2-D conv over [n, c, 1, L] that channels-last needs (PyTorch has no 3-D
    channels-last format; cuDNN runs 1-D convs as 2-D ones anyway)."""
    return Shape(s.name, s.like, s.kind, s.n, s.c, s.k, (1, *s.x), (1, *s.f), (1, *s.stride), (0, *s.pad),
                 (1, *s.dil), (0, *s.out_pad) if s.out_pad else ())


def channels_last(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    fmt = torch.channels_last_3d if t.dim() == 5 else torch.channels_last
    return t.to(dtype=dtype).contiguous(memory_format=fmt)


@dataclass
class Runner:
    """One column on one shape: ``run`` is the timed call (it enqueues on the current stream),
    ``output`` the result of the last run as an NCHW-shaped tensor (any strides, any dtype)."""
    run: Callable[[], Any]
    output: Callable[[], torch.Tensor]
    note: str = ""
    label: str = ""


class NotApplicable(Exception):
    """This column cannot run this shape; the message says why (recorded, not an error)."""


def cudnn_runner(col: Column, s: Shape, x: torch.Tensor, w: torch.Tensor) -> Runner:
    torch.backends.cudnn.allow_tf32 = col.precision == "tf32"
    if col.layout == "nchw":
        state: Dict[str, torch.Tensor] = {}

        def run():
            state["y"] = torch_conv(s, x, w)
        return Runner(run, lambda: state["y"])
    dtype = torch.bfloat16 if col.precision == "bf16" else torch.float32
    s2 = as_2d(s) if s.rank == 1 else s
    xc = channels_last(x.unsqueeze(2) if s.rank == 1 else x, dtype)
    wc = channels_last(w.unsqueeze(2) if s.rank == 1 else w, dtype)
    state = {}

    def run_cl():
        state["y"] = torch_conv(s2, xc, wc)
    out = (lambda: state["y"].squeeze(2)) if s.rank == 1 else (lambda: state["y"])
    return Runner(run_cl, out, "1-D as 2-D [n,c,1,L]" if s.rank == 1 else "")


class CutlassLib:
    """One library built by build.sh (conv_fprop.cu): ucut_conv_setup checks and prepares a
    problem, ucut_conv_run launches it on a stream."""

    def __init__(self, path: str):
        self.path = path
        self.name = os.path.basename(path)[:-3]
        lib = ctypes.CDLL(path)
        lib.ucut_conv_describe.restype = ctypes.c_char_p
        lib.ucut_conv_setup.restype = ctypes.c_int
        lib.ucut_conv_setup.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.ucut_conv_run.restype = ctypes.c_int
        lib.ucut_conv_run.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.lib = lib
        self.describe = lib.ucut_conv_describe().decode()
        fields = dict(kv.split("=", 1) for kv in self.describe.split())
        self.rank = int(fields["rank"])
        self.precision = {("float", "float"): "tf32", ("bf16", "bf16"): "bf16", ("bf16", "float"): "bf16f32"}.get(
            (fields.get("in"), fields.get("out")), "")
        if not self.precision:
            raise ValueError(f"unknown precision in '{self.describe}'")
        self._err = ctypes.create_string_buffer(512)

    def setup(self, dims: List[int], x: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> Tuple[int, str]:
        self._dims = (ctypes.c_int * len(dims))(*dims)
        rc = self.lib.ucut_conv_setup(self._dims, x.data_ptr(), w.data_ptr(), y.data_ptr(), self._err, len(self._err))
        return rc, self._err.value.decode()

    def run(self) -> Tuple[int, str]:
        rc = self.lib.ucut_conv_run(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), self._err,
                                    len(self._err))
        return rc, self._err.value.decode() if rc else ""


class FakeCutlassLib:
    """--cpu's stand-in for a library: reads the same dims array as conv_fprop.cu (read_dims) and
    computes y with torch from the channels-last x and w, so the CPU run checks what this script
    hands the kernel (layouts, channel padding, the transposed filter, the output view)."""

    def __init__(self, rank: int, precision: str):
        self.rank, self.precision = rank, precision
        self.name = f"fake{rank}d_{precision}"
        self.describe = f"rank={rank} fake {precision} (torch on the CPU)"

    def setup(self, dims: List[int], x: torch.Tensor, w: torch.Tensor, y: torch.Tensor) -> Tuple[int, str]:
        r = self.rank
        n, c, k = dims[:3]
        sp = [dims[3 + i * r:3 + (i + 1) * r] for i in range(6)]  # x, f, pad_lo, pad_hi, stride, dil
        align = 4 if self.precision == "tf32" else 8
        if c % align or k % align:
            return 1, f"C={c} or Cout={k} is not a multiple of {align}"
        if sp[2] != sp[3]:
            return 1, "asymmetric padding (the fake does not do it)"
        if list(x.shape) != [n, *sp[0], c] or list(w.shape) != [k, *sp[1], c]:
            return 2, f"x {list(x.shape)} or w {list(w.shape)} disagree with dims {dims}"
        self._args = (x, w, y, sp)
        return 0, ""

    def run(self) -> Tuple[int, str]:
        x, w, y, sp = self._args
        perm = (0, self.rank + 1, *range(1, self.rank + 1))
        fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[self.rank]
        out = fn(x.permute(perm).float(), w.permute(perm).float(), None, sp[4], sp[2], sp[5])
        y.copy_(out.permute(0, *range(2, 2 + self.rank), 1))
        return 0, ""


def load_cutlass(libdir: str) -> Tuple[List[Any], List[str]]:
    """Every conv library in libdir, and the problems loading them met."""
    libs, notes = [], []
    for path in sorted(glob.glob(os.path.join(libdir, "*.so"))):
        try:
            libs.append(CutlassLib(path))
        except (OSError, AttributeError, KeyError, ValueError) as e:
            notes.append(f"{os.path.basename(path)}: not loaded ({type(e).__name__}: {e})")
    return libs, notes


def cutlass_runner(col: Column, lib: Any, s: Shape, x: torch.Tensor, w: torch.Tensor) -> Runner:
    """Runs s as CUTLASS fprop: x and w made channels-last (and bf16) outside the timing, a
    transposed conv of stride 1 as the direct conv with the flipped, transposed filter."""
    if s.kind == "depthwise":
        raise NotApplicable("groups > 1: CUTLASS 3.x SM90 conv has no grouped/depthwise fprop")
    note = []
    pad, dil, stride = list(s.pad), list(s.dil), list(s.stride)
    if s.kind == "transposed":
        if any(v != 1 for v in s.stride) or any(s.out_pad):
            raise NotApplicable("strided transposed conv: needs phase decomposition (not in this bench)")
        # conv_transpose(x, w, p) = conv(x, flip(w)^T, d*(k-1)-p) at stride 1
        w = w.transpose(0, 1).flip(list(range(2, 2 + s.rank)))
        pad = [d * (f - 1) - p for d, f, p in zip(s.dil, s.f, s.pad)]
        if min(pad) < 0:
            raise NotApplicable("transposed conv with padding above dil*(k-1)")
        note.append("transposed as fprop with the flipped filter")
    in_dtype = torch.float32 if col.precision == "tf32" else torch.bfloat16
    out_dtype = torch.bfloat16 if col.precision == "bf16" else torch.float32
    align = 4 if in_dtype == torch.float32 else 8
    perm = (0, *range(2, 2 + s.rank), 1)
    xc = x.permute(perm).to(in_dtype)
    wc = w.permute(perm).to(in_dtype)
    c = s.c
    if c % align:
        c = -(-c // align) * align
        xc = F.pad(xc, (0, c - s.c))
        wc = F.pad(wc, (0, c - s.c))
        note.append(f"C zero-padded {s.c}->{c}")
    xc, wc = xc.contiguous(), wc.contiguous()
    out = s.out()
    y = torch.full((s.n, *out, s.k), float("nan"), dtype=out_dtype, device=x.device)
    dims = [s.n, c, s.k, *s.x, *s.f, *pad, *pad, *stride, *dil]
    rc, why = lib.setup(dims, xc, wc, y)
    if rc == 1:
        raise NotApplicable(f"{lib.name}: {why}")
    if rc != 0:
        raise RuntimeError(f"{lib.name}: setup failed ({rc}): {why}")
    keep = (xc, wc)  # alive while the runner is

    def run():
        r, why = lib.run()
        if r != 0:
            raise RuntimeError(f"{lib.name}: run failed ({r}): {why}")
        return keep
    back = (0, 1 + s.rank, *range(1, 1 + s.rank))
    return Runner(run, lambda: y.permute(back), "; ".join(note), lib.name)


def layout_runner(name: str, s: Shape, x: torch.Tensor) -> Runner:
    """The fp32 layout copies around a channels-last kernel: x to NHWC, and y (as fresh NHWC
    data of the output's size) back to NCHW."""
    perm = (0, *range(2, 2 + s.rank), 1)
    if name == "x_to_cl":
        state: Dict[str, torch.Tensor] = {}

        def run():
            state["y"] = x.permute(perm).contiguous()
        return Runner(run, lambda: state["y"])
    yc = torch.rand((s.n, *s.out(), s.k), device=x.device)
    back = (0, 1 + s.rank, *range(1, 1 + s.rank))
    state2: Dict[str, torch.Tensor] = {}

    def run_back():
        state2["y"] = yc.permute(back).contiguous()
    return Runner(run_back, lambda: state2["y"])


# ---------------------------------------------------------------------------------------------
# Errors, SOL, timing


def errors(y: torch.Tensor, ref: torch.Tensor, y64: torch.Tensor) -> Dict[str, Any]:
    """y against float64 and against the fp32 TF32 reference, a batch entry at a time (the float64
    temporaries of a whole output would not all fit beside it)."""
    max64 = ref64 = scale = sq = sq64 = 0.0
    m4 = m2 = 0.0
    finite = True
    for i in range(y.shape[0]):
        yi, ri, ai = y[i].double(), ref[i].double(), y64[i]
        finite = finite and bool(torch.isfinite(yi).all())
        d = (yi - ai).abs()
        max64 = max(max64, float(d.max()))
        sq += float((d * d).sum())
        ref64 = max(ref64, float((ri - ai).abs().max()))
        scale = max(scale, float(ai.abs().max()))
        sq64 += float((ai * ai).sum())
        dr = (yi - ri).abs()
        m4 = max(m4, float((dr / (1e-4 + 1e-4 * ri.abs())).max()))
        m2 = max(m2, float((dr / (1e-2 + 1e-2 * ri.abs())).max()))
    if not finite:
        max64 = m4 = m2 = math.inf
    ok4, ok2 = finite and m4 <= 1.0, finite and m2 <= 1.0
    verdict = "elementwise" if ok4 else ("float64" if finite and max64 <= ref64 else "fail")
    return {"max_abs_err64": max64, "norm_err64": max64 / scale if scale else math.nan,
            "rel_fro_err64": math.sqrt(sq / sq64) if sq64 else math.nan, "ref_max_abs_err64": ref64,
            "margin_1e-4": m4, "allclose_1e-4": ok4, "margin_1e-2": m2, "allclose_1e-2": ok2,
            "default_verdict": verdict, "finite": finite}


def gpu_peaks(dev: torch.device) -> Tuple[str, Dict[str, float]]:
    if dev.type != "cuda":
        return "H200 (assumed: CPU run)", PEAKS["H200"]
    name = torch.cuda.get_device_name(dev)
    return name, PEAKS["H100"] if "H100" in name else PEAKS["H200"]


def sol_ms(s: Shape, precision: str, peaks: Dict[str, float]) -> float:
    """max(FLOPs / peak, (x + w + y) bytes / HBM) for one precision; the problem SOL is tf32's."""
    xe, we, ye = s.elems()
    in_b = 2 if precision.startswith("bf16") else 4
    out_b = 2 if precision == "bf16" else 4
    rate = peaks["fp32" if precision == "fp32" else "bf16" if precision.startswith("bf16") else "tf32"]
    return 1e3 * max(s.flops() / rate, ((xe + we) * in_b + ye * out_b) / peaks["bw"])


def time_runner(r: Runner, dev: torch.device, args, flusher) -> Dict[str, Any]:
    if dev.type == "cuda":
        st = timing.time_cuda(r.run, dev, min_reps=args.reps, target_s=args.target_s, warmup=args.warmup,
                              flusher=flusher)
    else:
        st = timing.time_cpu(r.run, min_reps=3, target_s=0.01, warmup=1)
    d = st.to_json()
    d["samples_ms"] = [round(v, 5) for v in d["samples_ms"]]
    return d


# ---------------------------------------------------------------------------------------------
# One shape


def measure_shape(s: Shape, dev: torch.device, libs: List[Any], args, flusher, peaks,
                  journal: "Journal") -> Dict[str, Any]:
    row: Dict[str, Any] = {"shape": asdict(s), "name": s.name, "like": s.like, "kind": s.kind,
                           "out": list(s.out()), "gflop": s.flops() / 1e9,
                           "sol_ms": {p: sol_ms(s, p, peaks) for p in ("tf32", "fp32", "bf16", "bf16f32")},
                           "columns": {}}
    x, w = make_inputs(s, dev)
    torch.backends.cudnn.allow_tf32 = True
    ref = torch_conv(s, x, w)
    y64 = torch_conv(s, x.double(), w.double())
    ref_ms = None
    for col in COLUMNS:
        if col.backend == "cudnn":
            cands = [None]
        else:
            cands = [lib for lib in libs if lib.rank == s.rank and lib.precision == col.precision]
            if not cands:
                row["columns"][col.name] = {"status": "n/a", "why": f"no {col.precision} rank-{s.rank} library"}
                continue
        results = []
        for lib in cands:
            res: Dict[str, Any] = {"library": lib.name if lib else ""}
            if lib is not None and lib.name in journal.crashed:
                results.append({**res, "status": "n/a", "why": f"skipped: it {journal.crashed[lib.name]}"})
                continue
            journal.progress(s.name, col.name, lib.name if lib else "")
            try:
                r = cudnn_runner(col, s, x, w) if lib is None else cutlass_runner(col, lib, s, x, w)
                r.run()
                if dev.type == "cuda":
                    torch.cuda.synchronize(dev)
                res.update(errors(r.output(), ref, y64))
                res["time"] = time_runner(r, dev, args, flusher)
                res["ms"] = res["time"]["median_ms"]
                res["note"] = r.note
                res["status"] = "ok"
            except NotApplicable as e:
                res.update(status="n/a", why=str(e))
            except torch.cuda.OutOfMemoryError as e:
                res.update(status="error", why=f"out of memory: {str(e)[:200]}")
            except RuntimeError as e:
                res.update(status="error", why=f"{type(e).__name__}: {str(e)[:300]}")
                if context_lost(dev):
                    row["columns"][col.name] = res
                    raise
            finally:
                torch.backends.cudnn.allow_tf32 = True
                r = None
            results.append(res)
        ok = [r for r in results if r["status"] == "ok"]
        best = dict(min(ok, key=lambda r: r["ms"]) if ok else results[-1])
        if len(results) > 1:
            best["candidates"] = [{k: v for k, v in r.items() if k != "time"} for r in results]
        if col.name == "ref" and ok:
            ref_ms = best["ms"]
        if best["status"] == "ok":
            best["sol_ms"] = row["sol_ms"][col.precision]
            best["pct_sol"] = 100.0 * best["sol_ms"] / best["ms"]
            best["speedup_vs_ref"] = ref_ms / best["ms"] if ref_ms else None
        row["columns"][col.name] = best
    for name, _ in LAYOUT_COLUMNS:
        journal.progress(s.name, name, "")
        try:
            r = layout_runner(name, s, x)
            row["columns"][name] = {"status": "ok", **_timed(r, dev, args, flusher)}
        except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
            row["columns"][name] = {"status": "error", "why": str(e)[:300]}
    del x, w, ref, y64
    return row


def _timed(r: Runner, dev, args, flusher) -> Dict[str, Any]:
    t = time_runner(r, dev, args, flusher)
    return {"ms": t["median_ms"], "time": t}


def context_lost(dev: torch.device) -> bool:
    """Whether a CUDA error is sticky (the context cannot run anything more)."""
    if dev.type != "cuda":
        return False
    try:
        torch.cuda.synchronize(dev)
        torch.zeros(1, device=dev).add_(1).item()
        return False
    except RuntimeError:
        return True


# ---------------------------------------------------------------------------------------------
# Output: one JSON, one markdown table, from the same rows


def fmt_ms(c: Dict[str, Any], with_speedup: bool = True) -> str:
    if not c or c.get("status") != "ok":
        return "n/a" if c and c.get("status") == "n/a" else ("error" if c else "")
    s = f"{c['ms']:.3f}"
    if with_speedup and c.get("speedup_vs_ref"):
        s += f" ({c['speedup_vs_ref']:.2f}×)"
    if c.get("library"):
        s += " " + c["library"].rsplit("_", 1)[-1]  # the winning library's tile (build.sh's names end in it)
    return s


def fmt_err(c: Dict[str, Any]) -> str:
    if not c or c.get("status") != "ok":
        return fmt_ms(c)
    mark = lambda b: "✓" if b else "✗"  # noqa: E731
    v = {"elementwise": "", "float64": " f64", "fail": " F"}[c["default_verdict"]]
    return f"{c['norm_err64']:.1e} {mark(c['allclose_1e-4'])}{mark(c['allclose_1e-2'])}{v}"


def table(meta: Dict[str, Any], rows: List[Dict[str, Any]]) -> str:
    cols = [c.name for c in COLUMNS]
    out = [f"# Convolution on {meta['device']}: cuDNN layouts and precisions, CUTLASS SM90 fprop", "",
           f"{meta['date']}, torch {meta['torch']}, cuDNN {meta['cudnn']}, commit {meta['commit']}. "
           f"Peaks: TF32 {meta['peaks']['tf32'] / 1e12:.1f}, BF16 {meta['peaks']['bf16'] / 1e12:.1f}, "
           f"FP32 {meta['peaks']['fp32'] / 1e12:.1f} TFLOP/s; HBM {meta['peaks']['bw'] / 1e12:.2f} TB/s. "
           f"Timing: {meta['timing']}.", "",
           "Columns: " + "; ".join(f"`{c.name}` {c.what}" for c in COLUMNS) + "; "
           + "; ".join(f"`{n}` {w}" for n, w in LAYOUT_COLUMNS) + ".", "",
           "## Time (median ms; × = speed-up over `ref`)", "",
           "| shape | like | GFLOP | SOL tf32 | SOL bf16 | " + " | ".join(cols) + " | x_to_cl | y_to_nchw |",
           "|---|---|---:|---:|---:|" + "---:|" * (len(cols) + 2)]
    for r in rows:
        if r.get("status") in ("skipped", "failed"):
            out.append(f"| {r['name']} | {r.get('like', '')} | | | | {r['status']}: {r.get('why', '')} |")
            continue
        c = r["columns"]
        out.append(f"| {r['name']} | {r['like']} | {r['gflop']:.1f} | {r['sol_ms']['tf32']:.3f} | "
                   f"{r['sol_ms']['bf16']:.3f} | " + " | ".join(fmt_ms(c.get(n, {}), n != "ref") for n in cols)
                   + f" | {fmt_ms(c.get('x_to_cl', {}), False)} | {fmt_ms(c.get('y_to_nchw', {}), False)} |")
    out += ["", "## Error (max|y−y64| / max|y64|; allclose against `ref` at 1e-4 then 1e-2; "
            "default-profile verdict: blank = elementwise, f64 = reference-class pass, F = fails)", "",
            "| shape | ref max|Δ64| | " + " | ".join(cols) + " |", "|---|---:|" + "---:|" * len(cols)]
    for r in rows:
        if r.get("status") in ("skipped", "failed"):
            continue
        c = r["columns"]
        ref_err = c.get("ref", {}).get("max_abs_err64")
        out.append(f"| {r['name']} | {ref_err:.2e} | " if ref_err is not None else f"| {r['name']} | | ")
        out[-1] += " | ".join(fmt_err(c.get(n, {})) for n in cols) + " |"
    # One line per (column, remark), naming the shapes it applies to.
    remarks: Dict[Tuple[str, str], List[str]] = {}
    for r in rows:
        for n, c in r.get("columns", {}).items():
            texts = []
            if c.get("status") in ("n/a", "error"):
                texts.append(f"{c['status']}: {c.get('why', '')}")
            elif c.get("note"):
                texts.append(c["note"])
            if c.get("time", {}).get("timing_suspect"):
                texts.append(f"timing suspect: {c['time']['suspect_reason']}")
            for t in texts:
                remarks.setdefault((n, t), []).append(r["name"])
    notes = [f"`{n}` {t} ({', '.join(names)})" for (n, t), names in remarks.items()]
    notes += meta.get("notes", [])
    if notes:
        out += ["", "## Notes", ""] + [f"- {n}" for n in notes]
    return "\n".join(out) + "\n"


class Journal:
    """results.json and table.md, rewritten before every measurement, so a run that dies (a lost
    CUDA context, a crash in a library, run.sh's time limit) leaves what it had and names what it
    was doing; --resume records that shape as failed and never loads a library that took a
    context down again (``crashed``)."""

    def __init__(self, out_dir: str, meta: Dict[str, Any]):
        self.out_dir, self.meta = out_dir, meta
        self.rows: List[Dict[str, Any]] = []
        self.crashed: Dict[str, str] = {}
        self.in_progress: Optional[Dict[str, str]] = None

    def resume(self) -> None:
        path = os.path.join(self.out_dir, "results.json")
        if not os.path.exists(path):
            return
        with open(path) as f:
            old = json.load(f)
        self.rows = old.get("rows", [])
        self.crashed = old.get("crashed_libraries", {})
        self.meta["notes"] = old.get("meta", {}).get("notes", self.meta.get("notes", []))
        was = old.get("in_progress")
        if was:
            what = f"column {was['column']}" + (f", library {was['library']}" if was.get("library") else "")
            self.rows.append({"name": was["shape"], "status": "failed",
                              "why": f"the run died measuring it ({what}); the measurement resumed after it"})
            if was.get("library"):
                self.crashed[was["library"]] = f"took the run down on {was['shape']}"
                self.meta["notes"].append(f"{was['library']} took the run down on {was['shape']}; not run after")

    def progress(self, shape: str, column: str, library: str) -> None:
        self.in_progress = {"shape": shape, "column": column, "library": library}
        self.write()

    def add(self, row: Dict[str, Any]) -> None:
        self.rows.append(row)
        self.in_progress = None
        self.write()

    def write(self) -> None:
        doc = {"meta": self.meta, "rows": self.rows, "in_progress": self.in_progress,
               "crashed_libraries": self.crashed}
        tmp = os.path.join(self.out_dir, "results.json.tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, default=str)
        os.replace(tmp, os.path.join(self.out_dir, "results.json"))
        with open(os.path.join(self.out_dir, "table.md"), "w") as f:
            f.write(table(self.meta, self.rows))


def commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder for results.json and table.md")
    ap.add_argument("--libs", default=os.path.join(ROOT, ".carry", "conv"), help="folder of the CUTLASS .so files")
    ap.add_argument("--only", help="regex of shape names to measure")
    ap.add_argument("--reps", type=int, default=20, help="minimum timed repetitions (default 20)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--target-s", type=float, default=0.05, help="measured time to aim for per column")
    ap.add_argument("--budget-s", type=float, default=200.0, help="skip the shapes left after this many seconds")
    ap.add_argument("--resume", action="store_true", help="continue OUT/results.json after a lost context")
    ap.add_argument("--cpu", action="store_true", help="no GPU: shrunken shapes on the CPU (tests this script)")
    ap.add_argument("--table-only", action="store_true", help="rewrite OUT/table.md from OUT/results.json")
    args = ap.parse_args()

    if args.table_only:
        with open(os.path.join(args.out, "results.json")) as f:
            doc = json.load(f)
        text = table(doc["meta"], doc["rows"])
        with open(os.path.join(args.out, "table.md"), "w") as f:
            f.write(text)
        print(text)
        return 0

    os.makedirs(args.out, exist_ok=True)
    t_start = time.time()
    dev = torch.device("cpu" if args.cpu else "cuda")
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("measure.py: no CUDA device (use --cpu to test the script)", file=sys.stderr)
        return 2
    device_name, peaks = gpu_peaks(dev)
    libs, lib_notes = load_cutlass(args.libs) if dev.type == "cuda" else (
        [FakeCutlassLib(r, p) for r in (1, 2, 3) for p in ("tf32", "bf16", "bf16f32")], [])
    if dev.type == "cuda" and not libs:
        lib_notes.append(f"no CUTLASS libraries in {args.libs}: the cutlass columns are n/a")
    if dev.type != "cuda":  # load the real libraries all the same: their entry points must resolve
        real, real_notes = load_cutlass(args.libs)
        lib_notes += [f"{l.name}: {l.describe} (loaded, not run: no GPU)" for l in real] + real_notes
    meta = {"device": device_name, "torch": torch.__version__,
            "cudnn": str(torch.backends.cudnn.version()) if dev.type == "cuda" else "n/a",
            "date": datetime.date.today().isoformat(), "commit": commit(), "peaks": peaks,
            "timing": ("ucutlass_torch.timing (warm-up, L2 flushed before each repetition, CUDA events, median of "
                       f">= {args.reps}); cudnn.benchmark off (PyTorch's default); conversions outside the timing"
                       if dev.type == "cuda" else "CPU perf_counter (--cpu: shrunken shapes, not a measurement)"),
            "libraries": [{"name": l.name, "describe": l.describe} for l in libs], "notes": lib_notes,
            "seed": SEED, "argv": sys.argv[1:]}
    journal = Journal(args.out, meta)
    if args.resume:
        journal.resume()
    done = {r["name"] for r in journal.rows}
    print(f"measure.py: {device_name}, torch {torch.__version__}, {len(libs)} "
          f"{'CUTLASS libraries' if dev.type == 'cuda' else 'CPU stand-ins for CUTLASS libraries'}", flush=True)
    for n in meta["notes"]:
        print("  " + n, flush=True)
    flusher = timing.L2Flusher(dev) if dev.type == "cuda" else None
    torch.backends.cudnn.benchmark = False
    for s in SHAPES:
        if s.name in done or (args.only and not re.search(args.only, s.name)):
            continue
        shape = s.shrunk() if args.cpu else s
        if time.time() - t_start > args.budget_s:
            journal.add({"name": s.name, "like": s.like, "status": "skipped",
                         "why": f"time budget ({args.budget_s:g} s) spent"})
            continue
        t0 = time.time()
        try:
            row = measure_shape(shape, dev, libs, args, flusher, peaks, journal)
        except Exception as e:  # noqa: BLE001 -- one shape never ends the run
            if context_lost(dev):
                print(f"{s.name}: CUDA context lost ({type(e).__name__}: {str(e)[:200]})", flush=True)
                journal.write()
                return CONTEXT_LOST
            row = {"name": s.name, "like": s.like, "status": "failed",
                   "why": f"{type(e).__name__}: {str(e)[:300]}", "trace": traceback.format_exc()[-2000:]}
        row["wall_s"] = round(time.time() - t0, 2)
        journal.add(row)
        if dev.type == "cuda":
            torch.cuda.empty_cache()
        cols = row.get("columns", {})
        summary = "  ".join(f"{n} {fmt_ms(cols.get(n, {}), False)}" for n in ("ref", "cl_tf32", "cl_bf16",
                                                                               "cutlass_tf32", "cutlass_bf16"))
        print(f"{s.name}: {row.get('status', 'ok')} in {row['wall_s']} s  {summary}", flush=True)
    meta["wall_s"] = round(time.time() - t_start, 1)
    journal.write()
    print(table(meta, journal.rows))
    return 0

if __name__ == "__main__":
    sys.exit(main())
