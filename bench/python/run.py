"""The torch.compile backend on two ordinary PyTorch models (issue 39, item 7; docs/benchmarks.md).

For each configuration (model, dtype, batch) it times, with CUDA events, one forward pass of:
eager; ``torch.compile`` (Inductor) in its default mode and in ``max-autotune``; and
``torch.compile(backend="ucutlass")``, whose first call runs the search (``--minutes`` for the
whole model, ``--budget`` attempts per subgraph) and whose later calls run the kernels it kept.
A second process then starts from nothing but the same result cache and memory (``budget 0``:
nothing is searched) and reports the seconds from its start to its first call at warm speed.
Each compiled result is compared with eager (max abs error) and the backend's report says which
parts became kernels.

Models, written as a user would (no problem files): a GPT-2-small block (d 768, 12 heads,
T 1024, pre-LayerNorm, causal attention, GELU MLP) and a Llama-style MLP (d 4096, hidden 11008,
SiLU gate, T 256); the batch multiplies T.

  python3 bench/python/run.py --out DIR [--configs gpt:fp32:32,mlp:fp32:32,...] [--profile kb-v01]
                              [--minutes 1.5] [--budget 6] [--deadline SECONDS] [--skip max-autotune]

Results: DIR/results.jsonl (one line per configuration and mode) and a Markdown table on stdout.
Timing rules are the harness's own: warm-up, then ``--reps`` repetitions; the median is reported.
No L2 flush between repetitions: this is a model's forward, not a kernel (its weights are larger
than L2 at every size here but the batch-1 MLP's activations).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def models():
    from ucutlass_torch.examples import GptBlock, LlamaMLP
    return {"gpt": (GptBlock, 1024, 768), "mlp": (LlamaMLP, 256, 4096)}


def build(name: str, dtype_name: str, batch: int, device: str, tiny: bool = False):
    import torch
    cls, t, d = models()[name]
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype_name]
    torch.manual_seed(0)
    if tiny:  # the plumbing on a CPU: small sizes
        m = cls(64, 4) if name == "gpt" else cls(64, 96)
        t, d = 16, 64
    else:
        m = cls()
    m = m.to(device=device, dtype=dtype).eval()
    x = torch.randn(batch, t, d, device=device, dtype=dtype)
    return m, x


def sync(device: str) -> None:
    import torch
    if device == "cuda":
        torch.cuda.synchronize()


def time_forward(fn, x, device: str, reps: int, warmup: int = 3) -> float:
    """Median milliseconds of ``fn(x)`` over ``reps`` repetitions after ``warmup``."""
    import torch
    with torch.no_grad():
        for _ in range(warmup):
            fn(x)
        sync(device)
        samples = []
        for _ in range(reps):
            if device == "cuda":
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                fn(x)
                b.record()
                b.synchronize()
                samples.append(a.elapsed_time(b))
            else:
                t0 = time.perf_counter()
                fn(x)
                samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def first_call(fn, x, device: str):
    """(seconds of the first call, its output)."""
    import torch
    t0 = time.perf_counter()
    with torch.no_grad():
        y = fn(x)
        # max-autotune runs the graph as a CUDA graph whose output the next call overwrites: the
        # output is kept as a copy (PyTorch refuses to read an overwritten one).
        y = y.clone()
    sync(device)
    return time.perf_counter() - t0, y


def max_err(a, b) -> float:
    return float((a.float() - b.float()).abs().max())


def backend_options(args, budget: int):
    return {"budget": budget, "minutes": args.minutes, "profile": args.profile, "policy": args.policy,
            "cache_dir": os.path.join(args.out, "backend-cache"), "db": os.path.join(args.out, "memory.db"),
            "binary": args.binary, "fallback": args.fallback}


def run_config(args, name: str, dtype_name: str, batch: int, started: float, emit) -> None:
    import torch
    from ucutlass_torch.backend import backend_from_options
    m, x = build(name, dtype_name, batch, args.device, args.tiny)
    cfg = {"model": name, "dtype": dtype_name, "batch": batch, "shape": list(x.shape), "profile": args.profile}
    with torch.no_grad():
        want = m(x)
    eager = time_forward(m, x, args.device, args.reps)
    emit(dict(cfg, mode="eager", ms=eager))

    def left() -> float:
        return args.deadline - (time.perf_counter() - started)

    for mode in ("default", "max-autotune"):
        if mode in args.skip or left() < args.min_left:
            emit(dict(cfg, mode=f"inductor {mode}", skipped="--skip" if mode in args.skip else "deadline"))
            continue
        torch._dynamo.reset()
        try:  # an Inductor mode that fails is a row, not the end of the configuration
            c = torch.compile(m, mode=None if mode == "default" else mode)
            first_s, y = first_call(c, x, args.device)
            err = max_err(y, want)
            emit(dict(cfg, mode=f"inductor {mode}", first_call_s=first_s, ms=time_forward(c, x, args.device, args.reps),
                      max_abs_err=err))
            del c
        except Exception as e:  # noqa: BLE001
            emit(dict(cfg, mode=f"inductor {mode}", error=repr(e)[-600:]))

    if "ucutlass" in args.skip or left() < args.min_left:
        emit(dict(cfg, mode="ucutlass", skipped="--skip" if "ucutlass" in args.skip else "deadline"))
        return
    torch._dynamo.reset()
    be = backend_from_options(backend_options(args, args.budget))  # the object, so its report can be read
    c = torch.compile(m, backend=be)
    first_s, y = first_call(c, x, args.device)
    ms = time_forward(c, x, args.device, args.reps)
    rep = be.report
    emit(dict(cfg, mode="ucutlass", first_call_s=first_s, ms=ms, max_abs_err=max_err(y, want),
              kernels=len(rep.kernels()), parts=len(rep.parts), report=str(rep)))
    del c
    if "restart" in args.skip or left() < 30:
        return
    # A second process: the same model and cache, nothing searched; seconds to warm speed.
    child = [sys.executable, os.path.abspath(__file__), "--child", f"{name}:{dtype_name}:{batch}", "--out", args.out,
             "--profile", args.profile, "--policy", args.policy, "--device", args.device, "--fallback", args.fallback,
             "--reps", str(args.reps), "--warm-ms", repr(ms)] + (["--binary", args.binary] if args.binary else []) + \
        (["--tiny"] if args.tiny else [])
    t0 = time.perf_counter()
    p = subprocess.run(child, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=max(30.0, min(left(), 3600.0)))
    wall = time.perf_counter() - t0
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    out = json.loads(line[-1]) if line else {"error": p.stdout[-800:]}
    emit(dict(cfg, mode="ucutlass restart", process_s=wall, **out))


def child(args) -> None:
    """The restarted process: from its start (process_s counts the interpreter and imports too) to
    the end of the first call whose time is within 10% of the first process's warm time."""
    t_start = time.perf_counter()
    import torch
    from ucutlass_torch.backend import backend_from_options
    name, dtype_name, batch = args.child.split(":")
    m, x = build(name, dtype_name, int(batch), args.device, args.tiny)
    be = backend_from_options(backend_options(args, 0))
    c = torch.compile(m, backend=be)
    calls, warm_at, ms = 0, None, None
    with torch.no_grad():
        while calls < 50:
            ms = time_forward(c, x, args.device, reps=1, warmup=0)
            calls += 1
            if args.warm_ms and ms <= 1.1 * args.warm_ms:
                warm_at = time.perf_counter() - t_start
                break
    print(json.dumps({"to_warm_s": warm_at, "calls": calls, "last_ms": ms,
                      "kernels": len(be.report.kernels()), "searched": sum(p.searched for p in be.report.parts),
                      "in_process_s": time.perf_counter() - t_start}))


def table(rows) -> str:
    out = ["| model | dtype | batch | mode | ms | vs eager | first call s | max abs err | note |",
           "|---|---|---|---|---|---|---|---|---|"]
    eager = {(r["model"], r["dtype"], r["batch"]): r["ms"] for r in rows if r["mode"] == "eager"}
    for r in rows:
        key = (r["model"], r["dtype"], r["batch"])
        ms = r.get("ms")
        vs = f"{eager[key] / ms:.2f}x" if ms and key in eager else ""
        note = r.get("skipped", "")
        if r["mode"] == "ucutlass":
            note = f"{r.get('kernels', 0)} of {r.get('parts', 0)} parts kernels"
        if r["mode"] == "ucutlass restart":
            note = (f"warm after {r['to_warm_s']:.1f} s in process, {r.get('process_s', 0):.1f} s with start-up"
                    if r.get("to_warm_s") is not None else str(r.get("error", "never reached warm speed"))[-200:])
            ms = r.get("last_ms")
        first = r.get("first_call_s")
        err = r.get("max_abs_err")
        out.append(f"| {r['model']} | {r['dtype']} | {r['batch']} | {r['mode']} | "
                   f"{'' if ms is None else f'{ms:.3f}'} | {vs} | {'' if first is None else f'{first:.1f}'} | "
                   f"{'' if err is None else f'{err:.2e}'} | {note} |")
    return "\n".join(out)


def record_problems(args) -> None:
    """--record-problems DIR: the problem files the backend writes for each configuration's
    subgraphs, copied into DIR with their weights, without searching (a runner that records the
    `ucutlass optimize` call and answers as a failed search, so every part falls back). On a CPU
    (`--device cpu`) this is the input of `ucutlass warmup --suite DIR --match 'g_*'`: the zoo of
    these models' openings, built before the GPU call."""
    import shutil
    import torch
    from ucutlass_torch import backend, tool
    os.makedirs(args.record_problems, exist_ok=True)

    def runner(argv):
        if len(argv) > 2 and argv[1] == "optimize":
            src = os.path.dirname(argv[2])
            for f in os.listdir(src):
                if os.path.isfile(os.path.join(src, f)):
                    shutil.copy(os.path.join(src, f), args.record_problems)
            print("recorded", os.path.basename(argv[2]), flush=True)
        return 1, "recording only: nothing searched"

    for spec in args.configs.split(","):
        name, dtype_name, batch = spec.split(":")
        torch._dynamo.reset()
        m, x = build(name, dtype_name, int(batch), args.device, args.tiny)
        options = tool.SearchOptions(budget=args.budget, minutes=args.minutes, profile=args.profile, policy=args.policy)
        be = backend.Backend(options, cache_dir=os.path.join(args.out, "record-cache", spec.replace(":", "_")),
                             runner=runner, fallback="eager")
        with torch.no_grad():
            torch.compile(m, backend=be)(x)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", default="gpt:fp32:1,gpt:fp32:32,mlp:fp32:1,mlp:fp32:32,"
                                         "gpt:bf16:1,gpt:bf16:32,mlp:bf16:1,mlp:bf16:32")
    ap.add_argument("--profile", default="kb-v01", choices=["default", "kb-v01"])
    ap.add_argument("--policy", default="tf32", choices=["exact", "tf32", "bf16"])
    ap.add_argument("--minutes", type=float, default=1.5, help="search wall time per model (all its subgraphs)")
    ap.add_argument("--budget", type=int, default=6, help="attempts per subgraph")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds for the whole run")
    ap.add_argument("--min-left", type=float, default=45.0, help="skip a compile mode with less time left")
    ap.add_argument("--skip", default="", help="comma list: max-autotune, default, ucutlass, restart")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--fallback", default="auto", choices=["auto", "inductor", "eager"])
    ap.add_argument("--binary", default=None)
    ap.add_argument("--tiny", action="store_true", help="small models (the plumbing on a CPU)")
    ap.add_argument("--record-problems", default=None, metavar="DIR",
                    help="write the backend's problem files for each configuration to DIR and stop (no search)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--warm-ms", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.skip = set(s for s in args.skip.split(",") if s)
    os.makedirs(args.out, exist_ok=True)
    if args.child:
        child(args)
        return 0
    if args.record_problems:
        record_problems(args)
        return 0
    started = time.perf_counter()
    rows = []
    path = os.path.join(args.out, "results.jsonl")

    def emit(row):
        row = dict(row, at_s=round(time.perf_counter() - started, 1))
        rows.append(row)
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: v for k, v in row.items() if k != "report"}), flush=True)

    for spec in args.configs.split(","):
        name, dtype_name, batch = spec.split(":")
        if time.perf_counter() - started > args.deadline - args.min_left:
            print(f"# {spec}: skipped, deadline", flush=True)
            continue
        try:
            run_config(args, name, dtype_name, int(batch), started, emit)
        except Exception as e:  # noqa: BLE001 - one configuration's failure must not lose the others
            emit({"model": name, "dtype": dtype_name, "batch": int(batch), "mode": "error", "error": repr(e)[-600:]})
    print(table(rows))
    for r in rows:
        if r.get("report"):
            print(f"\n## {r['model']} {r['dtype']} batch {r['batch']}\n{r['report']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
