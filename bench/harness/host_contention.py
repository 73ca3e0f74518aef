"""Timing under CPU contention (docs/benchmarks.md, "Timing under load").

Times one PyTorch eager baseline (fp32 Linear + tanh, 2048x8192 -> 4096) with the contract's
protocol (timing.time_cuda) while N busy-loop processes load the host, with and without the
host-bound guard (HEAD_START_S head start, re-time, timing_suspect), and prints one line each.
Run on the GPU machine: python3 bench/harness/host_contention.py [BURNERS]
"""

import os
import subprocess
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
from ucutlass_torch import timing  # noqa: E402


def measure(label, fn, dev, head_start):
    timing.HEAD_START_S = head_start
    st = timing.time_cuda(fn, dev)
    print(f"{label:34s} head_start={head_start * 1e3:4.0f}ms median={st.median_ms:.4f} ms p80={st.p80_ms:.4f} "
          f"host_bound_loops={st.host_bound_loops} suspect={st.timing_suspect} {st.suspect_reason[:80]}", flush=True)


def burners(n, nice):
    return [subprocess.Popen(["nice", "-n", str(nice), sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else os.cpu_count()
    dev = torch.device("cuda")
    torch.manual_seed(0)
    lin = torch.nn.Linear(8192, 4096).to(dev)
    x = torch.randn(2048, 8192, device=dev)
    fn = lambda: torch.tanh(lin(x))  # noqa: E731
    for head in (0.0, timing.HEAD_START_S):
        measure("idle host", fn, dev, head)
    for nice in (0, 10):
        procs = burners(n, nice)
        try:
            for head in (0.0, 0.02):
                measure(f"{n} busy processes at nice {nice}", fn, dev, head)
        finally:
            for p in procs:
                p.kill()


if __name__ == "__main__":
    main()
