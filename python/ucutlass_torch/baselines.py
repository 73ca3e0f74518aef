"""Baselines: the problem's Model run by PyTorch eager and by torch.compile (mode "default", or
"max-autotune" on request), timed by the same harness as candidates (timing.time_fn), on the same
inputs (seed 42), under no_grad, with PyTorch's default precision flags (matmul TF32 off).

Results are cached on disk per (problem source hash, GPU name, torch version, mode, contract
version) as small JSON files, because compiling and timing a baseline costs far more than a
candidate evaluation.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from typing import Any, Callable, Dict, List, Optional

import torch

from . import timing

CACHE_VERSION = 1
MODES = ("eager", "compile", "max-autotune")


def cache_key(source_sha256: str, gpu: str, mode: str) -> str:
    text = json.dumps([CACHE_VERSION, source_sha256, gpu, torch.__version__, mode,
                       torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cache_load(cache_dir: Optional[str], key: str) -> Optional[Dict[str, Any]]:
    if not cache_dir:
        return None
    path = os.path.join(cache_dir, key + ".json")
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
        return data if data.get("key") == key else None
    except (OSError, ValueError):
        return None


def cache_store(cache_dir: Optional[str], key: str, data: Dict[str, Any]) -> None:
    if not cache_dir:
        return
    os.makedirs(cache_dir, exist_ok=True)
    path = os.path.join(cache_dir, key + ".json")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(dict(data, key=key), f)
    os.replace(tmp, path)  # atomic: a killed worker never leaves half a file


def make_callable(model: torch.nn.Module, inputs: List[Any], mode: str) -> Callable[[], Any]:
    if mode == "eager":
        fn = model
    else:
        torch._dynamo.reset()
        fn = torch.compile(model, mode=None if mode == "compile" else "max-autotune")

    def call():
        with torch.no_grad():
            return fn(*inputs)
    return call


def cached(source_sha256: str, gpu: str, mode: str, cache_dir: Optional[str]) -> Optional[Dict[str, Any]]:
    """The baseline's cached record (``cached`` set), or None: nothing is measured."""
    if mode not in MODES:
        raise ValueError(f"unknown baseline {mode!r}; known: {', '.join(MODES)}")
    hit = cache_load(cache_dir, cache_key(source_sha256, gpu, mode))
    if hit is not None:
        hit["cached"] = True
    return hit


def measure(model: torch.nn.Module, inputs: List[Any], mode: str, device: torch.device,
            source_sha256: str, gpu: str, cache_dir: Optional[str],
            read_clock: Optional[Callable[[], str]] = None, others: Optional[Callable[[], int]] = None,
            **timing_kw) -> Dict[str, Any]:
    """One baseline's timing (cached). Returns {"mode", "cached", "timing": TimingStats json,
    "setup_s"} or {"mode", "error"} when the baseline itself fails (e.g. torch.compile errors).
    ``others`` counts the other processes on the GPU: a baseline timed while any was there (before
    or after its timing) is used with a note but not cached, so a later run measures it again (run
    CB's eager baselines, timed beside GPU tests, were about 1.9x slow and made run CE's speedups
    look 1.5x better than they were, docs/benchmarks.md)."""
    hit = cached(source_sha256, gpu, mode, cache_dir)
    if hit is not None:
        return hit
    key = cache_key(source_sha256, gpu, mode)
    t0 = time.perf_counter()
    try:
        call = make_callable(model, inputs, mode)
        call()  # first call compiles; counted in setup_s, not in the timing
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    except Exception as e:  # noqa: BLE001 - a failing baseline is reported, not fatal
        return {"mode": mode, "error": f"{type(e).__name__}: {e}".strip()[:2000], "cached": False}
    setup_s = time.perf_counter() - t0
    sm_clock_mhz = read_clock() if read_clock else ""  # read only when measuring (not on a cache hit)
    busy = others() if others else 0
    try:
        stats = timing.time_fn(call, device, **timing_kw)
        # Timed twice: a baseline measured slow (runs D/E of docs/benchmarks.md saw eager times
        # 1.2-2.3x their own re-measurement, cause open) would overstate every speedup. The faster
        # median is kept, both are recorded, and a spread over 10% is noted.
        again = timing.time_fn(call, device, **timing_kw)
    except torch.cuda.OutOfMemoryError as e:  # a baseline out of memory is reported, not fatal
        return {"mode": mode, "error": f"out of memory: {str(e).strip().splitlines()[0]}", "cached": False}
    first_ms = stats.median_ms
    if again.median_ms < stats.median_ms:
        stats = again
    result = {"mode": mode, "cached": False, "setup_s": setup_s, "timing": stats.to_json(),
              "torch": torch.__version__, "gpu": gpu, "sm_clock_mhz": sm_clock_mhz,
              "medians_ms": [first_ms, again.median_ms]}
    lo, hi = sorted([first_ms, again.median_ms])
    notes = []
    if lo > 0 and hi > 1.1 * lo:
        notes.append(f"{mode} baseline unstable: medians {first_ms:.4g} and {again.median_ms:.4g} ms; the faster is kept")
    busy = max(busy, others() if others else 0)
    if busy:
        notes.append(f"{mode} baseline timed while {busy} other process(es) used the GPU: not cached")
        result["others_on_gpu"] = busy
    if notes:
        result["note"] = "; ".join(notes)
    if not busy:
        cache_store(cache_dir, key, result)
    return result
