"""Which kernels PyTorch runs for a problem's reference: ``python -m ucutlass_torch.reference_kernels
problems/P.py [...]``.

A diagnosis for problems whose fp32 reference carries rounding a kernel must reproduce (a
reference-limited mismatch, docs/eval-contract.md): the reference's GEMM kernel name says its
summation order (tile, split-K or sliced-K, SIMT or tensor cores), which the FP32 SIMT rung tries to
match. The model runs the way the contract runs it (fp32, PyTorch's default flags, seed 42 for the
model and the timing seed's inputs), twice to warm up, then once under ``torch.profiler``. On a GPU
the table lists each CUDA kernel launched (name, launches, total µs); without one, the aten
operators (a dry run for tests).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, List, Optional

import torch

from . import loader

__all__ = ["reference_kernels", "main"]


def reference_kernels(path: str, device: Optional[str] = None, seed: int = 42) -> Dict[str, Any]:
    """Profiles one forward of the problem's reference; returns {"problem", "device", "kernels":
    [{"name", "count", "us"}...]} with the kernels (or aten ops on CPU) in launch order."""
    dev = device or ("cuda" if torch.cuda.is_available() else "cpu")
    want_cuda = dev.startswith("cuda")
    lp = loader.load_problem(path)
    model = loader.build_model(lp, seed=seed, device=dev)
    inputs = loader.make_inputs(lp, seed=seed, device=dev)
    with torch.no_grad():
        for _ in range(2):
            model(*inputs)
        if want_cuda:
            torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU]
        if want_cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts) as prof:
            model(*inputs)
            if want_cuda:
                torch.cuda.synchronize()
    order: List[str] = []
    rows: Dict[str, Dict[str, Any]] = {}
    for ev in prof.events():
        on_gpu = str(getattr(ev, "device_type", "")).endswith("CUDA")
        if want_cuda != on_gpu:
            continue
        if not want_cuda and not ev.name.startswith("aten::"):
            continue
        r = rows.get(ev.name)
        if r is None:
            r = rows[ev.name] = {"name": ev.name, "count": 0, "us": 0.0}
            order.append(ev.name)
        r["count"] += 1
        r["us"] += float(getattr(ev, "device_time" if want_cuda else "cpu_time", 0.0) or 0.0)
    return {"problem": lp.name, "device": dev, "kernels": [rows[n] for n in order]}


def render(result: Dict[str, Any]) -> str:
    what = "CUDA kernels" if result["device"].startswith("cuda") else "aten operators (no GPU)"
    lines = [f"## {result['problem']}: {what} of one reference forward", "",
             "| launches | µs | name |", "|---:|---:|---|"]
    for k in result["kernels"]:
        lines.append(f"| {k['count']} | {k['us']:.1f} | `{k['name']}` |")
    if not result["kernels"]:
        lines.append("| – | – | (none recorded) |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ucutlass_torch.reference_kernels",
                                 description="list the kernels PyTorch runs for each problem's reference")
    ap.add_argument("problems", nargs="+", help="KernelBench-format problem files")
    ap.add_argument("--device", default=None, help="cuda or cpu (default: cuda when available)")
    args = ap.parse_args(argv)
    rc = 0
    for p in args.problems:
        try:
            sys.stdout.write(render(reference_kernels(p, args.device)) + "\n")
        except loader.ProblemError as e:
            sys.stderr.write(f"{e}\n")
            rc = 1
        sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
