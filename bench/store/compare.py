"""bench/store/compare.py DIR SHAPE...: for each MxNxK, DIR/new_<shape>.so (one stored kernel unit,
shapes at run time) and DIR/old_<shape>.so (shapes compiled in) against PyTorch, then their kernel
times with the contract's timing (L2 flushed before every repetition, CUDA events), interleaved in
rounds so that clock drift hits both alike. Prints a table; with $OUT set, writes
$OUT/store_parity.json."""
import ctypes
import json
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from ucutlass_torch.kernel import CtypesKernel  # noqa: E402
from ucutlass_torch.timing import L2Flusher  # noqa: E402


def run_fn(kernel, tensors, stream):
    ptrs = (ctypes.c_void_p * len(tensors))(*[t.data_ptr() for t in tensors])
    ws = torch.empty(max(kernel.workspace_bytes, 1), dtype=torch.uint8, device="cuda")

    def go():
        rc = kernel.lib.ucut_run(ptrs, len(tensors), None, 0, ctypes.c_void_p(ws.data_ptr()), kernel.workspace_bytes,
                                 ctypes.c_void_p(stream))
        if rc != 0:
            raise RuntimeError(f"{kernel.path}: ucut_run {rc}: {kernel.last_error()}")
    return go


def main():
    d, shapes = sys.argv[1], sys.argv[2:]
    torch.manual_seed(0)
    dev = torch.device("cuda")
    stream = torch.cuda.current_stream(dev).cuda_stream
    flusher = L2Flusher(dev)
    rows = []
    for s in shapes:
        m, n, k = (int(v) for v in s.split("x"))
        x = torch.randn(m, k, device=dev).to(torch.bfloat16)
        w = (torch.randn(n, k, device=dev) / k ** 0.5).to(torch.bfloat16)
        b = torch.randn(n, device=dev).to(torch.bfloat16)
        ref = torch.nn.functional.gelu(x.float() @ w.float().T + b.float())
        row = {"shape": s}
        fns = {}
        for which in ("old", "new"):
            kern = CtypesKernel(os.path.join(d, f"{which}_{s}.so"))
            y = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
            fn = run_fn(kern, [x, w, b, y], stream)
            fn()
            torch.cuda.synchronize()
            err = (y.float() - ref).abs()
            ok = bool(torch.isfinite(y.float()).all()) and bool((err <= 1e-2 + 1e-2 * ref.abs()).all())
            row[f"{which}_max_abs_err"] = float(err.max())
            row[f"{which}_correct"] = ok
            fns[which] = fn
        samples = {"old": [], "new": []}
        for _ in range(6):  # rounds, alternating which goes first
            for which in (("old", "new") if _ % 2 == 0 else ("new", "old")):
                fn = fns[which]
                for _w in range(3):
                    fn()
                for _r in range(15):
                    flusher.flush()
                    a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    fn()
                    e.record()
                    e.synchronize()
                    samples[which].append(a.elapsed_time(e))
        for which in ("old", "new"):
            row[f"{which}_median_ms"] = statistics.median(samples[which])
        row["new_over_old"] = row["new_median_ms"] / row["old_median_ms"]
        row["tflops_new"] = 2 * m * n * k / row["new_median_ms"] / 1e9
        rows.append(row)
        print(f"{s:>16}  old {row['old_median_ms']:.4f} ms  new {row['new_median_ms']:.4f} ms  new/old "
              f"{row['new_over_old']:.4f}  ({row['tflops_new']:.0f} TFLOP/s)  correct old {row['old_correct']} new "
              f"{row['new_correct']}  max err old {row['old_max_abs_err']:.3g} new {row['new_max_abs_err']:.3g}", flush=True)
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, "store_parity.json"), "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
    sys.exit(0 if all(r["old_correct"] and r["new_correct"] for r in rows) else 1)


if __name__ == "__main__":
    main()
