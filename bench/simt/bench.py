#!/usr/bin/env python3
"""GPU check and benchmark of the non-GEMM stage kernels (rowwise, reduce, scan, elementwise).

Input: a folder written by `ucut_simt_benchgen DIR` (one standalone .cu per case + cases.json),
or the same folder with the .so files already built. For each case: builds DIR/<case>.so with
nvcc when missing (parallel, --jobs), runs it on random inputs, checks it against PyTorch
(float64 reference), then times it (CUDA events, median of --iters after warm-up) against
PyTorch eager on the same inputs and against the measured device copy bandwidth.

  python3 bench/simt/bench.py DIR [--only softmax,mse] [--iters 20] [--no-time] [--json out.json]

Exit status 1 when any case is incorrect. Prints a markdown table for docs/benchmarks.md.
"""
import argparse
import concurrent.futures
import ctypes
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

DT = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i64": torch.int64,
      "i32": torch.int32, "bool": torch.bool, "u8": torch.uint8}
RUNTIME = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "codegen", "runtime")


def build(cu, so):
    cmd = ["nvcc", "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-DNDEBUG",
           "-gencode=arch=compute_90a,code=sm_90a", "-Xcompiler", "-fPIC", "-shared",
           "-I", RUNTIME, cu, "-o", so]
    r = subprocess.run(cmd, capture_output=True, text=True)
    return so, r.returncode, r.stderr[-3000:]


def make_inputs(case, gen):
    ref = case["ref"]
    ts = {}
    for t in case["tensors"]:
        shape, dt = t["shape"], DT[t["dtype"]]
        if t["role"] == "out":
            ts[t["name"]] = torch.empty(shape, dtype=dt, device="cuda")
            continue
        if dt == torch.bool:
            ts[t["name"]] = torch.rand(shape, device="cuda", generator=gen) > 0.3
        elif dt == torch.int64:  # cross-entropy class indices
            classes = next(x["shape"][1] for x in case["tensors"] if x["name"] == "x")
            v = torch.randint(0, classes, shape, device="cuda", generator=gen)
            if "ignore" in case["name"]:
                v[::7] = -100
            ts[t["name"]] = v
        else:
            v = torch.randn(shape, device="cuda", generator=gen, dtype=torch.float32)
            if ref.get("op") == "cumprod":
                v = 1 + 0.01 * v
            if ref.get("op") == "kl_div":
                v = torch.log_softmax(v, -1) if t["name"] == "x" else torch.softmax(v, -1)
            if ref.get("op") == "hinge" and t["name"] == "t":
                v = torch.sign(v)
            ts[t["name"]] = v.to(dt)
    return ts


def reference(case, ts, dtype=torch.float64):
    """PyTorch's answer (dtype float64: the reference; None: eager in the input dtype)."""
    ref, op = case["ref"], case["ref"]["op"]
    c = (lambda v: v.to(dtype)) if dtype is not None else (lambda v: v)
    x = c(ts["x"])
    kind = ref["kind"]
    if kind == "rowwise":
        n = x.shape[-1]
        if op == "softmax": return torch.softmax(x, -1)
        if op == "log_softmax": return torch.log_softmax(x, -1)
        if op == "logsumexp": return torch.logsumexp(x, -1)
        if op == "layer_norm": return F.layer_norm(x, (n,), c(ts["w"]), c(ts["b"]), 1e-5)
        if op == "rms_norm": return F.rms_norm(x, (n,), c(ts["w"]), 1e-6)
        if op == "l2_normalize": return F.normalize(x, dim=-1, eps=1e-12)
        if op == "sum": return x.sum(-1)
        if op == "mean": return x.mean(-1)
        if op == "max": return x.amax(-1)
        if op == "min": return x.amin(-1)
        if op == "argmax": return x.argmax(-1)
        if op == "argmin": return x.argmin(-1)
    if kind == "reduce":
        dims = ref["dims"] or list(range(x.dim()))
        attrs = ref.get("attrs", {})
        red = ["mean", "sum", "batchmean"][int(attrs.get("reduction", 0))]
        if op == "sum": return x.sum(dims)
        if op == "mean": return x.mean(dims)
        if op == "max": return x.amax(dims)
        if op == "min": return x.amin(dims)
        if op == "prod": return x.prod(dims) if len(dims) == 1 else x.flatten().prod()
        if op == "cross_entropy": return F.cross_entropy(x, ts["t"], reduction=red)
        t = c(ts["t"])
        if op == "mse": return F.mse_loss(x, t, reduction=red)
        if op == "l1": return F.l1_loss(x, t, reduction=red)
        if op == "huber": return F.huber_loss(x, t, reduction=red, delta=attrs.get("delta", 1.0))
        if op == "smooth_l1": return F.smooth_l1_loss(x, t, reduction=red, beta=attrs.get("beta", 1.0))
        if op == "kl_div": return F.kl_div(x, t, reduction=red)
        if op == "hinge":
            v = torch.clamp(1 - x * t, min=0)
            return v.mean() if red == "mean" else v.sum()
    if kind == "scan":
        dim = ref["dim"]
        v = x
        if "m" in ts:
            v = v * ts["m"].to(v.dtype)
        if ref["reverse"]:
            v = v.flip(dim)
        r = torch.cumsum(v, dim) if op == "cumsum" else torch.cumprod(v, dim)
        if ref["exclusive"]:
            r = r - v if op == "cumsum" else r / v
        if ref["reverse"]:
            r = r.flip(dim)
        return r
    if kind == "elementwise":
        return F.gelu(x + c(ts["b"])) * c(ts["r"])
    raise ValueError(f"no reference for {case['name']}")


def time_ms(fn, iters):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def copy_bandwidth(iters):
    x = torch.empty(1 << 28, dtype=torch.float32, device="cuda")  # 1 GiB
    y = torch.empty_like(x)
    ms = time_ms(lambda: y.copy_(x), iters)
    return 2 * x.numel() * 4 / ms / 1e6  # GB/s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--only", default="")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    cases = json.load(open(os.path.join(args.dir, "cases.json")))
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c["name"] in keep]
    todo = [(os.path.join(args.dir, c["name"] + ".cu"), os.path.join(args.dir, c["name"] + ".so"))
            for c in cases if not os.path.exists(os.path.join(args.dir, c["name"] + ".so"))]
    build_err = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for so, rc, err in ex.map(lambda p: build(*p), todo):
            if rc != 0:
                build_err[so] = err
                print(f"BUILD FAILED {so}\n{err}", file=sys.stderr)
    bw = copy_bandwidth(args.iters)
    print(f"device: {torch.cuda.get_device_name()}, measured copy bandwidth {bw:.0f} GB/s\n")
    print("| case | config | MB moved | ok | max rel err | ours ms | eager ms | ours GB/s | % copy | vs eager |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    rows, bad = [], 0
    for case in cases:
        so = os.path.join(args.dir, case["name"] + ".so")
        if so in build_err:
            bad += 1
            rows.append({"case": case["name"], "ok": False, "error": "build failed"})
            continue
        lib = ctypes.CDLL(so)
        lib.bench_run.restype = ctypes.c_int
        lib.bench_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        lib.bench_workspace_bytes.restype = ctypes.c_size_t
        lib.bench_error.restype = ctypes.c_char_p
        ts = make_inputs(case, gen)
        ptrs = (ctypes.c_void_p * len(case["tensors"]))(*[ts[t["name"]].data_ptr() for t in case["tensors"]])
        wsb = lib.bench_workspace_bytes()
        ws = torch.empty(max(wsb, 1), dtype=torch.uint8, device="cuda")
        stream = torch.cuda.current_stream().cuda_stream

        def run():
            rc = lib.bench_run(ptrs, ws.data_ptr(), wsb, stream)
            if rc != 0:
                raise RuntimeError(f"{case['name']}: code {rc}: {lib.bench_error().decode()}")

        out_name = next(t["name"] for t in case["tensors"] if t["role"] == "out")
        try:
            run()
            torch.cuda.synchronize()
        except Exception as e:  # a failure is a result, not the end of the run
            print(f"| {case['name']} | {case['config']} | | FAIL: {e} |")
            bad += 1
            continue
        got = ts[out_name]
        want = reference(case, ts)
        if got.dtype in (torch.int64, torch.int32):
            ok = torch.equal(got.cpu(), want.to(got.dtype).cpu().reshape(got.shape))
            err = 0.0 if ok else 1.0
        else:
            g, w = got.double().reshape(-1), want.double().reshape(-1)
            err = ((g - w).abs().max() / (w.abs().max() + 1e-12)).item()
            tol = 1e-4 if got.dtype == torch.float32 else 2e-2
            ok = err <= tol and not torch.isnan(g).any().item()
        bad += 0 if ok else 1
        moved = sum(ts[t["name"]].numel() * ts[t["name"]].element_size() for t in case["tensors"])
        row = {"case": case["name"], "config": case["config"], "mb": moved / 1e6, "ok": ok, "err": err}
        if not args.no_time:
            ours = time_ms(run, args.iters)
            eager = time_ms(lambda: reference(case, ts, None), args.iters)
            row.update(ours_ms=ours, eager_ms=eager, gbs=moved / ours / 1e6)
            row["pct_copy"] = 100 * row["gbs"] / bw
            row["speedup"] = eager / ours
            print(f"| {case['name']} | {case['config']} | {moved/1e6:.0f} | {'yes' if ok else 'NO'} | {err:.1e} | "
                  f"{ours:.3f} | {eager:.3f} | {row['gbs']:.0f} | {row['pct_copy']:.0f}% | {row['speedup']:.2f}x |")
        else:
            print(f"| {case['name']} | {case['config']} | {moved/1e6:.0f} | {'yes' if ok else 'NO'} | {err:.1e} | | | | | |")
        rows.append(row)
        del ts, ws
    if args.json:
        json.dump({"copy_gbs": bw, "cases": rows}, open(args.json, "w"), indent=1)
    print(f"\n{len(cases) - bad}/{len(cases)} correct")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
