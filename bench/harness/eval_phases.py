"""What the contract's evaluation costs on one problem, by phase (docs/benchmarks.md, "The `kb*`
suite with the evaluation itemized"): the problem's own PyTorch model stands in for the kernel (it
runs the forward and copies its results into the kernel's output buffers), so no library is
compiled and every second printed is the harness's, not a kernel's.

    python3 bench/harness/eval_phases.py PROBLEM.py [--profile kb-v01|default] [--repeat N]

One JSON line an evaluation: the verdict, whether the fused checks ran (UCUTLASS_FUSED_CHECKS=0
turns them off; docs/eval-contract.md), the seconds by phase (correctness.PhaseClock: inputs,
reference, candidate, guards, checks, float64, timing, recheck, bind) and the GPU memory peak.
Run on the GPU machine; on a CPU it runs the same protocol on the CPU (the tests' worker).
"""

import argparse
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from ucutlass_torch import kernel  # noqa: E402
from ucutlass_torch.worker import Worker  # noqa: E402


def stand_in(worker: Worker, info: dict) -> kernel.PyKernel:
    """A kernel library's description of the problem's inputs and outputs, launched as the
    reference model itself writing into the output buffers."""
    tensors = [{"name": f"x{i}", "role": "in", "dtype": t["dtype"], "shape": t["shape"], "index": i}
               for i, t in enumerate(info["inputs"])]
    n_in = len(tensors)
    tensors += [{"name": f"y{i}", "role": "out", "dtype": t["dtype"], "shape": t["shape"], "index": i}
                for i, t in enumerate(info["outputs"])]

    def run(ts, scalars):
        with torch.no_grad():
            outs = worker.model(*ts[:n_in])
        for dst, src in zip(ts[n_in:], outs if isinstance(outs, (tuple, list)) else [outs]):
            dst.copy_(src.reshape(dst.shape))
    return kernel.PyKernel({"abi": 1, "name": info["name"], "tensors": tensors}, run)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problem")
    ap.add_argument("--profile", default="kb-v01", choices=["kb-v01", "default"])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    t0 = time.perf_counter()
    w = Worker("cuda" if cuda else "cpu")
    info = w.load(args.problem)
    load_s = time.perf_counter() - t0
    k = stand_in(w, info)
    for n in range(args.repeat):
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        r = w.evaluate(k, profile=args.profile)
        print(json.dumps({"problem": info["name"], "profile": args.profile, "evaluation": n, "verdict": r["verdict"],
                          "fused_checks": w.env.get("fused_checks", False),
                          "error": r["error"][:200], "load_s": round(load_s, 2),
                          "seconds": {p: round(s, 3) for p, s in sorted(r["seconds"].items(), key=lambda x: -x[1])},
                          "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if cuda else None}),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
