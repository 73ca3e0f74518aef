"""The fused comparison and fingerprint kernels (``fused_checks.cu``) for the correctness checks.

correctness.py's quick comparison and fingerprints are a dozen PyTorch operations a piece, each a
full pass over the tensors: on the 6 GiB problems of the kb suite the checks held the GPU longer
than the kernels, the reference and the timing together (docs/benchmarks.md, runs CR-DF). The CUDA
file beside this one does each in one read. This module compiles it with nvcc the first time a
process asks on a GPU (cached under the kernel cache, ``<cache>/fused-checks/<key>.so``, the key
naming the source, the nvcc version and the GPU architecture), loads it with ctypes and launches
on the current stream. :func:`load` returns None when it cannot (no GPU, no nvcc, a compile error,
``UCUTLASS_FUSED_CHECKS=0``), and correctness.py then keeps its PyTorch path; correctness.py also
checks the library against that path on a battery of tensors before using it (its
``_fused_library``), so a verdict never depends on which path ran.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Optional, Tuple

import torch

from . import tool

__all__ = ["ENV", "SOURCE", "Library", "load", "compile_library", "nvcc_path"]

ENV = "UCUTLASS_FUSED_CHECKS"  # "0": never use the fused kernels
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fused_checks.cu")
# Partial results: one a block; blocks a launch at most (a grid-stride loop covers the rest).
MAX_BLOCKS = 2048
_DTYPES = {torch.float32: 0, torch.bfloat16: 1, torch.float16: 2}
_WORDS = {torch.int32: 4, torch.int16: 2, torch.uint8: 1}


def nvcc_path() -> Optional[str]:
    """nvcc on PATH, else CUDA_HOME's or /usr/local/cuda's."""
    found = shutil.which("nvcc")
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.access(os.path.join(home, "bin", "nvcc"), os.X_OK):
            return os.path.join(home, "bin", "nvcc")
    return None


def _arch(capability: Tuple[int, int]) -> str:
    major, minor = capability
    return f"{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")


def compile_library(arch: str, out_dir: Optional[str] = None, nvcc: Optional[str] = None) -> str:
    """Compiles fused_checks.cu for ``arch`` ("90a") into ``out_dir`` (default: the cache) once;
    returns the .so's path. Raises RuntimeError with nvcc's message when it fails."""
    nvcc = nvcc or nvcc_path()
    if not nvcc:
        raise RuntimeError("nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)")
    with open(SOURCE, "rb") as f:
        source = f.read()
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    key = hashlib.sha256(source + version.encode() + arch.encode()).hexdigest()[:16]
    out_dir = out_dir or os.path.join(tool.cache_root(), "fused-checks")
    path = os.path.join(out_dir, f"fused_checks-{arch}-{key}.so")
    if os.path.exists(path):
        return path
    os.makedirs(out_dir, exist_ok=True)
    # Compiled to a temporary name and renamed: workers starting together never load half a file.
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=out_dir)
    os.close(fd)
    cmd = [nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC",
           f"-gencode=arch=compute_{arch},code=sm_{arch}", SOURCE, "-o", tmp]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"nvcc failed on {SOURCE} (exit {r.returncode}): {(r.stderr or r.stdout).strip()[-2000:]}")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


class Library:
    """The loaded kernels. Each call launches on the current stream and returns device tensors
    (nothing is read back here: the caller reads everything it needs in one transfer)."""

    def __init__(self, path: str):
        self.path = path
        self.lib = ctypes.CDLL(path)
        self.lib.ucut_fused_threads.restype = ctypes.c_int
        self.lib.ucut_fused_compare.restype = ctypes.c_int
        self.lib.ucut_fused_compare.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong,
                                                ctypes.c_float, ctypes.c_float, ctypes.c_int, ctypes.c_void_p,
                                                ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.ucut_fused_fingerprint.restype = ctypes.c_int
        self.lib.ucut_fused_fingerprint.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_longlong,
                                                    ctypes.c_longlong, ctypes.c_int, ctypes.c_void_p,
                                                    ctypes.c_void_p]
        self.threads = int(self.lib.ucut_fused_threads())

    def _blocks(self, n: int) -> int:
        return max(1, min(MAX_BLOCKS, -(-n // self.threads)))

    def compare(self, out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float) -> Optional[torch.Tensor]:
        """The quick comparison's statistics of two contiguous tensors of one floating dtype
        (float32, bfloat16, float16) on one GPU, as a float64 device tensor: [elements failing
        (not finite, or out of tolerance), max |o−r|, max |r|, max rel, the highest score
        |o−r| − (atol + rtol·|r|), the flat index of its first occurrence]. None when the
        dtypes are not these."""
        code = _DTYPES.get(out.dtype)
        if code is None or ref.dtype != out.dtype or out.numel() != ref.numel() or not out.numel():
            return None
        n = out.numel()
        blocks = self._blocks(n)
        dev = out.device
        floats = torch.empty(blocks * 4, dtype=torch.float32, device=dev)
        index = torch.empty(blocks, dtype=torch.int64, device=dev)
        bad = torch.empty(blocks, dtype=torch.int32, device=dev)
        with torch.cuda.device(dev):  # the launch goes to the current device
            stream = torch.cuda.current_stream(dev).cuda_stream
            err = self.lib.ucut_fused_compare(code, out.data_ptr(), ref.data_ptr(), n, atol, rtol, blocks,
                                              floats.data_ptr(), index.data_ptr(), bad.data_ptr(), stream)
        if err:
            raise RuntimeError(f"ucut_fused_compare: CUDA error {err}")
        # The launch has exactly `blocks` blocks (the kernel takes the same min(MAX_BLOCKS,
        # ceil(n / threads))), each with at least one element: every partial is written.
        part = floats.view(blocks, 4)
        score = part[:, 3]
        best = score.max()
        first = torch.where(score == best, index, torch.full_like(index, torch.iinfo(torch.int64).max)).min()
        return torch.stack([bad.to(torch.float64).sum(), part[:, 0].max().double(), part[:, 1].max().double(),
                            part[:, 2].max().double(), best.double(), first.double()])

    def fingerprint(self, words: torch.Tensor, step: int) -> Optional[torch.Tensor]:
        """correctness.fingerprints' two sums of a contiguous 1-D tensor of words (int32, int16 or
        uint8) cut in pieces of ``step``, as an int64 device tensor [plain, mixed]; None for other
        word types."""
        size = _WORDS.get(words.dtype)
        if size is None or words.dim() != 1 or not words.is_contiguous() or not words.numel():
            return None
        n = words.numel()
        blocks = self._blocks(n)
        sums = torch.empty(blocks * 2, dtype=torch.int64, device=words.device)
        with torch.cuda.device(words.device):
            stream = torch.cuda.current_stream(words.device).cuda_stream
            err = self.lib.ucut_fused_fingerprint(size, words.data_ptr(), n, int(step), blocks, sums.data_ptr(),
                                                  stream)
        if err:
            raise RuntimeError(f"ucut_fused_fingerprint: CUDA error {err}")
        return sums.view(blocks, 2).sum(dim=0)  # int64 sums wrap as the kernel's do


_LOADED: dict = {}


def load(device: Optional[torch.device] = None) -> Optional[Library]:
    """The library for ``device``'s architecture, compiled and loaded once a process; None (with one
    line on stderr saying why, once) when it cannot be had."""
    if os.environ.get(ENV, "1").strip() == "0" or not torch.cuda.is_available():
        return None
    dev = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    if dev.type != "cuda":
        return None
    arch = _arch(torch.cuda.get_device_capability(dev))
    if arch in _LOADED:
        return _LOADED[arch]
    lib = None
    try:
        lib = Library(compile_library(arch))
    except Exception as e:  # noqa: BLE001 - any failure keeps the PyTorch path
        print(f"ucutlass worker: fused checks unavailable ({e}); the checks run as PyTorch operations",
              file=sys.stderr)
    _LOADED[arch] = lib
    return lib
