"""Checks, on the GPU at hand, that PyTorch's fp32 GEMV adds in the order `schedule gemv16` / `gemv32` assume
(src/codegen/runtime/gemv.cuh), by revealing its summation tree (docs/benchmarks.md run AY).

Every row r of `a` is ones except +2^60 at element i and -2^60 at element j_r; `v` is ones. The big
pair cancels where their partial sums meet, and every one added into either before that is lost,
so K - out[r] is the number of leaves under the lowest common ancestor of i and j_r: one GEMV
answers M queries. For each i given, all K elements j are asked and compared with the tree of
gemv.cuh at --splits chunks and groups of --group; the script prints the kernels PyTorch ran and how many answers the
model explains. Exit 0 when all of them are.

    python3 bench/orders/gemv_tree.py [--m 8192] [--k 262144] [--splits <SM count>] [--group 16|32] [--i 0 1 1000 ...]
"""
import argparse
import sys

import torch

LANES = 16


def model_lca(i, k, splits, group=16):
    """Leaves under LCA(i, j) for every j in the tree of gemv.cuh (j = i gives -1)."""
    j = torch.arange(k, dtype=torch.int64)
    chunk = (k + splits - 1) // splits

    def pos(x):
        c = x // chunk
        start = c * chunk
        end = torch.clamp(start + chunk, max=k)
        off = x - start
        return c, start, end, off % LANES, off // LANES

    ci, si, ei, li, pi = (t.item() if torch.is_tensor(t) else t for t in pos(torch.tensor(i)))
    cj, _, _, lj, pj = pos(j)
    n = ei - si
    lane_len = [max(0, (n - l + LANES - 1) // LANES) for l in range(LANES)]
    cum = torch.tensor(lane_len).cumsum(0)
    out = torch.empty(k, dtype=torch.int64)
    other = cj != ci
    out[other] = torch.clamp(chunk * (torch.maximum(cj[other], torch.tensor(ci)) + 1), max=k)
    lanes = ~other & (lj != li)
    out[lanes] = cum[torch.maximum(lj[lanes], torch.tensor(li))]
    same = ~other & (lj == li)
    gi, gj = pi // group, pj // group
    groups = same & (gj != gi)
    out[groups] = torch.clamp((torch.maximum(gj[groups], torch.tensor(gi)) + 1) * group, max=lane_len[li])
    chain = same & (gj == gi)
    out[chain] = torch.maximum(pj[chain], torch.tensor(pi)) - group * gi + 1
    out[i] = -1
    return out


def measured_lca(a, v, i, rows):
    m, k = a.shape
    big = 2.0 ** 60
    full = torch.empty(k, dtype=torch.int64, device=a.device)
    for s in range(0, k, m):
        n = min(m, k - s)
        js = torch.arange(s, s + n, device=a.device)
        if s <= i < s + n:
            js[i - s] = (i + 1) % k
        a.fill_(1.0)
        a[rows[:n], i] = big
        a[rows[:n], js] = -big
        full[s:s + n] = (k - torch.matmul(a, v)[:n, 0]).to(torch.int64)
    full[i] = -1
    return full.cpu()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=8192)
    ap.add_argument("--k", type=int, default=262144)
    ap.add_argument("--splits", type=int, default=0, help="chunks of the model (default: the GPU's SM count)")
    ap.add_argument("--group", type=int, default=16, choices=(16, 32),
                    help="a lane's elements per group (gemv16 / gemv32)")
    ap.add_argument("--i", type=int, nargs="*", default=[0, 1, 2, 7, 31, 128, 1000, 4096, 65536, 131079])
    o = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("gemv_tree: needs a CUDA GPU", file=sys.stderr)
        return 2
    splits = o.splits or torch.cuda.get_device_properties(0).multi_processor_count
    a = torch.empty(o.m, o.k, device="cuda")
    v = torch.ones(o.k, 1, device="cuda")
    from torch.profiler import ProfilerActivity, profile
    a.fill_(1.0)
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a, v)
        torch.cuda.synchronize()
    kernels = [e.key for e in p.key_averages() if e.device_type.name == "CUDA"]
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}: {o.m} x {o.k} runs " + "; ".join(kernels))
    rows = torch.arange(o.m, device="cuda")
    bad = total = 0
    for i in o.i:
        if not 0 <= i < o.k:
            continue
        got, want = measured_lca(a, v, i, rows), model_lca(i, o.k, splits, o.group)
        diff = (got != want).nonzero().flatten()
        total += o.k
        bad += diff.numel()
        note = ""
        if diff.numel():
            j = diff[0].item()
            note = f"; first at j={j}: {got[j].item()} leaves, model {want[j].item()}"
        print(f"i={i}: {o.k - diff.numel()} / {o.k} answers as the model at {splits} chunks, groups of {o.group}{note}")
    print(f"{total - bad} / {total} answers explained by gemv.cuh's tree at {splits} chunks, groups of {o.group}")
    return 0 if bad == 0 and total > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
