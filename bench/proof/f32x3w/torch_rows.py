"""PyTorch's fp32 default on the f32x3w benchmark's problems, measured the harness's way.

    python3 bench/proof/f32x3w/torch_rows.py [--shapes MxNxK,...] [--kinds ...] [--reps N]
                                             [--warmup N] [--json PATH]

Takes the same options as f32x3w_bench (others are ignored, so run.sh passes it the same
command line). For each shape and kind it builds exactly the benchmark's inputs (the same hash
RNG, repeated here in int64 tensor arithmetic), computes the float64 reference with torch, and
times torch.mm(A, B.t()) and F.linear(A, B) in fp32 with TF32 off (PyTorch's default): a 256 MiB
L2 flush before every call, CUDA events, warm-ups, median. Prints markdown rows like the
benchmark's and writes the same JSON lines with --json.
"""
import argparse
import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F

from table import HEADER, md_row

MASK32 = 0xFFFFFFFF


def mul32(x, c):
    """(x * c) mod 2^32 for x < 2^32 in int64, without overflowing int64: c in 16-bit halves."""
    return (x * (c & 0xFFFF) + (((x * (c >> 16)) & 0xFFFF) << 16)) & MASK32


def lowbias32(x):
    """main.cu's lowbias32 on int64 values below 2^32 (tensors or Python ints)."""
    x = x ^ (x >> 16)
    x = mul32(x, 0x7FEB352D)
    x = x ^ (x >> 15)
    x = mul32(x, 0x846CA68B)
    return x ^ (x >> 16)


def hash_uniform(start, count, key, device):
    """Elements start .. start+count-1 of main.cu's hash_uniform stream: float32 in [0, 1)."""
    i = torch.arange(start, start + count, dtype=torch.int64, device=device)
    h = lowbias32((i & MASK32) ^ lowbias32(((i >> 32) + key) & MASK32))
    return (h >> 8).to(torch.float32) * 2.0**-24  # exact: 24-bit integers times a power of two


def fill(rows, cols, seed, dist, scale, device, chunk=1 << 26):
    """A rows x cols float32 matrix, element i (row-major) as main.cu's fill_kernel makes it."""
    out = torch.empty(rows * cols, dtype=torch.float32, device=device)
    key = lowbias32(seed)
    scale_t = torch.tensor(scale, dtype=torch.float32, device=device)  # rounded to fp32 like main.cu's
    for s in range(0, out.numel(), chunk):  # chunks: the int64 temporaries are 8 bytes an element
        n = min(chunk, out.numel() - s)
        u = hash_uniform(s, n, key, device)
        if dist == "unit":
            v = u
        elif dist == "symmetric":
            v = (u * 2.0 - 1.0) * scale_t  # 2u - 1 exact; one rounding in the multiply
        else:
            v = u * 4.0 - 2.0  # exact
        out[s:s + n] = v
    return out.view(rows, cols)


KINDS = {"unit": ("unit", "unit"), "linear": ("unit", "symmetric"), "mixed": ("mixed", "mixed")}
SEED_A, SEED_B = 1, 2


def time_ms(fn, flush, warmup, reps):
    """Median, min, max milliseconds of fn() with the L2 flushed before every call."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for i in range(warmup + reps):
        flush.fill_(i & 0xFF)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if i >= warmup:
            ms.append(start.elapsed_time(stop))
    return statistics.median(ms), min(ms), max(ms)


def errors(c, ref):
    """max |C - R|, max |C - R| / (1e-4 + 1e-4 |R|), ||C - R||_F / ||R||_F, non-finite count."""
    bad = int((~torch.isfinite(c)).sum())
    if bad:
        return None, None, None, bad
    e = (c.double() - ref).abs_()
    max_abs = float(e.max())
    margin = float((e / (1e-4 + 1e-4 * ref.abs())).max())
    rel = float(torch.linalg.vector_norm(e) / torch.linalg.vector_norm(ref))
    return max_abs, margin, rel, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", default="4096x4096x4096,1024x8192x8192,128x32768x32768,2048x4096x8192")
    ap.add_argument("--kinds", default="unit,linear,mixed")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--json")
    args, _ = ap.parse_known_args()  # the benchmark's other options (--variants, --list) mean nothing here

    # PyTorch's fp32 default, stated rather than assumed
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    dev = torch.device("cuda")
    device_name = torch.cuda.get_device_name(dev)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    out = open(args.json, "w") if args.json else None
    print(f"torch {torch.__version__} on {device_name}", file=sys.stderr)
    print(HEADER, flush=True)

    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.lower().split("x"))
        for kind in args.kinds.split(","):
            da, db = KINDS[kind]
            scale = 1.0 / math.sqrt(K)
            A = fill(M, K, SEED_A, da, scale, dev)
            B = fill(N, K, SEED_B, db, scale, dev)
            ref = torch.mm(A.double(), B.double().t())  # fp64 GEMM: exact products, fp64 sums
            for name, fn in (("torch_mm_fp32", lambda: torch.mm(A, B.t())),
                             ("torch_linear_fp32", lambda: F.linear(A, B))):
                C = fn()
                torch.cuda.synchronize()
                max_abs, margin, rel, bad = errors(C, ref)
                del C
                med, lo, hi = time_ms(fn, flush, args.warmup, args.reps)
                ok = bad == 0 and margin <= 1.0
                status = ("PASS" if ok else "FAIL") if bad == 0 else f"NaN({bad} non-finite)"
                row = {"variant": name, "shape": shape, "M": M, "N": N, "K": K, "kind": kind, "ms": med,
                       "ms_min": lo, "ms_max": hi, "tflops": 2.0 * M * N * K / (med * 1e-3) / 1e12,
                       "max_abs_err": max_abs, "margin": margin, "rel_fro": rel,
                       "ref_fro": float(torch.linalg.vector_norm(ref)), "nonfinite": bad, "status": status,
                       "pass": ok, "device": device_name, "warmup": args.warmup, "reps": args.reps,
                       "source": f"torch {torch.__version__}"}
                print(md_row(row), flush=True)
                if out:
                    out.write(json.dumps(row) + "\n")
                    out.flush()
            del A, B, ref
            torch.cuda.empty_cache()  # the 128 x 32768 x 32768 B is 4 GiB (8 GiB in fp64)
    if out:
        out.close()


if __name__ == "__main__":
    main()
