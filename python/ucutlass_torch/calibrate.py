"""Calibrated ceilings for the SOL model (docs/sol.md, EVAL-CONTRACT section 4).

``python -m ucutlass_torch.calibrate`` measures, on the current CUDA GPU through PyTorch:

- device copy bandwidth: large device-to-device copies (far larger than L2, and an L2-sized flush
  written before each one), timed with CUDA events; bytes read + bytes written per second;
- device read bandwidth: a sum over the same buffer (reads only), bytes read per second; a
  read-only stream runs faster than a copy (no read-write turnarounds), so the memory ceiling is
  the larger of the two;
- achieved GEMM throughput on large square matmuls for bf16, fp16, tf32 (fp32 data with
  ``allow_tf32 = True``) and fp32 (TF32 off: the FMA pipes);

each the median of repeated timings, and prints one JSON object on stdout (SI units: B/s and
FLOP/s). ``ucutlass calibrate`` runs it and stores the result per GPU. Without a CUDA GPU it says
so on stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys

EXIT_NO_GPU = 2


def median_ms(torch, fn, reps: int, flush=None, warmup: int = 3) -> float:
    """Median of `reps` event-timed calls of fn(), each preceded by an L2 flush when given, after
    `warmup` untimed calls (also the torch.compile backend's fallback="auto" timing)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    samples = []
    for _ in range(reps):
        if flush is not None:
            flush.zero_()
        start.record()
        fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end))
    return statistics.median(samples)


def measure_copy_bw(torch, nbytes: int, reps: int, flush) -> dict:
    n = nbytes // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    ms = median_ms(torch, lambda: dst.copy_(src), reps, flush)
    moved = 2 * n * 4  # every byte read once and written once
    del src, dst
    return {"bytes_per_copy": n * 4, "median_ms": ms, "bytes_per_s": moved / (ms * 1e-3)}


def measure_read_bw(torch, nbytes: int, reps: int, flush) -> dict:
    n = nbytes // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    out = torch.empty((), dtype=torch.float32, device="cuda")
    ms = median_ms(torch, lambda: torch.sum(src, dim=0, out=out), reps, flush)
    del src, out
    return {"bytes_per_sum": n * 4, "median_ms": ms, "bytes_per_s": n * 4 / (ms * 1e-3)}


def measure_gemm(torch, dtype, tf32: bool, size: int, reps: int, flush) -> dict:
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        a = torch.randn(size, size, device="cuda", dtype=dtype)
        b = torch.randn(size, size, device="cuda", dtype=dtype)
        c = torch.empty(size, size, device="cuda", dtype=dtype)
        ms = median_ms(torch, lambda: torch.matmul(a, b, out=c), reps, flush)
        del a, b, c
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    flops = 2.0 * size ** 3
    return {"size": size, "median_ms": ms, "flop_per_s": flops / (ms * 1e-3)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ucutlass_torch.calibrate", description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions per measurement (median)")
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repetitions (smoke test)")
    args = ap.parse_args(argv)

    try:
        import torch
    except ImportError as e:  # pragma: no cover - depends on the environment
        print(f"calibrate: cannot import torch ({e}); install PyTorch with CUDA support", file=sys.stderr)
        return EXIT_NO_GPU
    if not torch.cuda.is_available():
        print("calibrate: no CUDA GPU is visible to PyTorch "
              f"(torch {torch.__version__}, CUDA build {torch.version.cuda or 'none'}); "
              "run 'ucutlass calibrate' on the GPU machine you want ceilings for", file=sys.stderr)
        return EXIT_NO_GPU

    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    reps = 5 if args.quick else max(3, args.reps)
    # An L2 flush writes at least 2x the L2 (EVAL-CONTRACT section 2); 256 MB when L2 is unknown.
    flush = torch.empty(max(2 * l2, 256 << 20) // 4, dtype=torch.float32, device="cuda")
    free, _total = torch.cuda.mem_get_info()
    copy_bytes = min(1 << 30, free // 8) if not args.quick else 256 << 20
    copy = measure_copy_bw(torch, copy_bytes, reps, flush)
    read = measure_read_bw(torch, 2 * copy_bytes, reps, flush)

    sizes = [4096] if args.quick else [8192, 16384]
    gemm = {}
    for key, dtype, tf32, kind_sizes in [
        ("bf16", torch.bfloat16, False, sizes),
        ("fp16", torch.float16, False, sizes),
        ("tf32", torch.float32, True, sizes),
        ("fp32", torch.float32, False, sizes[:1]),
    ]:
        runs = [measure_gemm(torch, dtype, tf32, s, reps, flush) for s in kind_sizes]
        gemm[key] = {"best": max(r["flop_per_s"] for r in runs), "runs": runs}

    out = {
        "device_name": torch.cuda.get_device_name(0),
        "sms": props.multi_processor_count,
        "l2_bytes": l2,
        "total_memory_bytes": props.total_memory,
        "copy_bw": copy["bytes_per_s"],
        "read_bw": read["bytes_per_s"],
        "gemm_bf16": gemm["bf16"]["best"],
        "gemm_fp16": gemm["fp16"]["best"],
        "gemm_tf32": gemm["tf32"]["best"],
        "gemm_fp32": gemm["fp32"]["best"],
        "measured_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "reps": reps,
        "details": {"copy": copy, "read": read, "gemm": {k: v["runs"] for k, v in gemm.items()}},
    }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
