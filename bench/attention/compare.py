"""The 16-bit attention kernels against each other and against PyTorch's default fused kernel.

Builds kernels.cu with nvcc (the headers of src/codegen/runtime), then for every case: whether
Hopper's kernel (`threads 384`) equals the mma.sync kernel (`threads 128`) bit for bit, how many
elements each differs from `F.scaled_dot_product_attention` by, and how many of those are out of
the default contract's tolerance; random inputs and the rescaled trial (x * 4 - 2). With
--time, the two kernels and PyTorch on the large causal and non-causal problems (back to back,
CUDA events, no L2 flush: the harness's figures are `ucutlass bench`'s). Run AZ in
docs/benchmarks.md.

    python3 bench/attention/compare.py [--so PATH] [--time] [--reps 20]
"""

import argparse
import ctypes
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.join(HERE, "..", "..", "src", "codegen", "runtime")
FLAGS = ["-std=c++17", "-O3", "--expt-relaxed-constexpr", "-DNDEBUG", "-gencode=arch=compute_90a,code=sm_90a",
         "-shared", "-Xcompiler", "-fPIC"]

# (case of kernels.cu, batch, query heads, key/value heads, Lq, Lk, D, Dv, dtype name, causal)
CASES = [
    (0, 8, 32, 32, 4096, 4096, 128, 128, "bfloat16", True),
    (1, 4, 32, 32, 4096, 4096, 128, 128, "bfloat16", False),
    (1, 2, 8, 8, 1000, 1000, 128, 128, "bfloat16", False),
    (0, 2, 4, 4, 777, 777, 128, 128, "bfloat16", True),
    (2, 2, 4, 4, 650, 650, 64, 64, "float16", True),
    (3, 2, 3, 3, 200, 333, 128, 64, "float16", False),
    (4, 2, 4, 4, 650, 650, 64, 128, "bfloat16", True),
    (0, 2, 8, 2, 1100, 1100, 128, 128, "bfloat16", True),  # grouped-query: 4 query heads a k/v head
    (1, 1, 2, 2, 100, 70, 128, 128, "bfloat16", False),    # one partial block of each
]


def build(out):
    cmd = ["nvcc", *FLAGS, "-I", RUNTIME, os.path.join(HERE, "kernels.cu"), "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compare.py: nvcc failed ({' '.join(cmd)}):\n{r.stderr}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--so", help="a kernels.cu library built already (default: build one)")
    ap.add_argument("--time", action="store_true", help="time the 4096-long problems")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        sys.exit("compare.py: needs a CUDA GPU (sm_90a)")
    so = args.so
    if not so:
        so = os.path.join(tempfile.mkdtemp(prefix="ucut_attn_"), "kernels.so")
        build(so)
    lib = ctypes.CDLL(so)
    print(torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)

    def run(kernel, which, q, k, v, heads, group):
        o = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
        # the scale as the product forms it for 16-bit data (stage_attention.cpp): the fp32 scale
        # times log2(e) in double, rounded to fp32 by the call
        sl2 = torch.tensor(1.0 / math.sqrt(q.shape[-1]), dtype=torch.float32).item() * 1.4426950408889634
        rc = lib.attn(kernel, which, ctypes.c_void_p(q.data_ptr()), ctypes.c_void_p(k.data_ptr()),
                      ctypes.c_void_p(v.data_ptr()), ctypes.c_void_p(o.data_ptr()), ctypes.c_longlong(q.shape[2]),
                      ctypes.c_longlong(k.shape[2]), ctypes.c_longlong(q.shape[0] * q.shape[1]),
                      ctypes.c_longlong(heads), ctypes.c_longlong(group), ctypes.c_float(sl2))
        if rc != 0:
            sys.exit(f"compare.py: kernel {kernel} case {which} returned {rc}")
        return o

    def out_of_tolerance(a, ref):
        d = (a.float() - ref.float()).abs()
        return int((d > 1e-2 + 1e-2 * ref.float().abs()).sum())

    torch.manual_seed(0)
    failures = 0
    for which, b, h, hkv, lq, lk, d, dv, dt, causal in CASES:
        dtype = getattr(torch, dt)
        for trial in ("random", "rescaled"):
            q = torch.randn(b, h, lq, d, dtype=dtype, device="cuda")
            k = torch.randn(b, hkv, lk, d, dtype=dtype, device="cuda")
            v = torch.randn(b, hkv, lk, dv, dtype=dtype, device="cuda")
            if trial == "rescaled":
                q, k, v = [x * 4.0 - 2.0 for x in (q, k, v)]
            ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=hkv != h)
            mma, ws = (run(kern, which, q, k, v, h, h // hkv) for kern in (0, 1))
            torch.cuda.synchronize()
            same = torch.equal(mma, ws)
            failures += not same
            print(f"{b}x{h}/{hkv}x{lq}x{lk} D{d} Dv{dv} {dt} causal={causal} {trial}: hopper == mma.sync {same}; "
                  f"vs PyTorch {int((ws != ref).sum())} elements apart, {out_of_tolerance(ws, ref)} out of "
                  f"tolerance", flush=True)
            if args.time and lq == 4096 and trial == "random":
                flops = 4 * b * h * lq * lk * d * (0.5 if causal else 1)
                for name, f in (("mma.sync", lambda: run(0, which, q, k, v, h, 1)),
                                ("hopper", lambda: run(1, which, q, k, v, h, 1)),
                                ("pytorch", lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))):
                    for _ in range(3):
                        f()
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    for _ in range(args.reps):
                        f()
                    end.record()
                    torch.cuda.synchronize()
                    ms = start.elapsed_time(end) / args.reps
                    print(f"  {name:9s} {ms:.3f} ms  {flops / ms / 1e9:.0f} TFLOP/s", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
