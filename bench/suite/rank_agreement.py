"""How well the ranking orders what a suite run measured: for every problem with three or more
correct single-GEMM candidates in OUT/<problem>/attempts.jsonl, the current binary's estimate of
each (``ucutlass space`` on the candidate's own program) against its measured time, and the
estimate the run itself recorded (``predicted_s``, the ranking of the run's binary).

    python3 bench/suite/rank_agreement.py OUT [OUT ...] [--bin build/ucutlass] [--gpu h100]

Per problem: Kendall's tau of estimate against time (1: the same order; 0: none; -1: reversed), for
the run's estimates and the current ones, and the current ranking's first against the fastest
measured. The last line sums concordant minus discordant pairs over every problem. A ranking
change is checked this way on the CPU machine against the journals of the last GPU run
(docs/benchmarks.md, "Changed since runs DE and DF").
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile


def estimate(binary, gpu, name, program, tmp):
    """The current ranking's t_est (seconds) of configuration ``name`` of ``program``, or None."""
    path = os.path.join(tmp, "candidate.ucut")
    with open(path, "w") as f:
        f.write(program)
    out = subprocess.run([binary, "space", path, "--gpu", gpu, "--top", "50"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        cols = line.split()
        if len(cols) > 3 and cols[1] == name:
            return float(cols[3]) * 1e-6
    return None


def pairs(rows, key):
    """(concordant - discordant, pairs compared) of ``key`` against the measured time."""
    score = compared = 0
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            s = (rows[i]["time"] - rows[j]["time"]) * (key(rows[i]) - key(rows[j]))
            if s:
                score += 1 if s > 0 else -1
                compared += 1
    return score, compared


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="+", help="suite output folders (each OUT/<problem>/attempts.jsonl)")
    ap.add_argument("--bin", default="build/ucutlass")
    ap.add_argument("--gpu", default="h100", help="the hardware row the run ranked for")
    ap.add_argument("--min", type=int, default=3, help="candidates a problem needs to be counted")
    a = ap.parse_args()
    total_old = total_new = 0
    with tempfile.TemporaryDirectory() as tmp:
        for out in a.out:
            for journal in sorted(glob.glob(os.path.join(out, "*", "attempts.jsonl"))):
                problem = os.path.basename(os.path.dirname(journal))
                rows = []
                with open(journal) as f:
                    for line in f:
                        if not line.strip():
                            continue
                        x = json.loads(line)
                        c = x.get("candidate") or {}
                        name = c.get("name", "")
                        if x.get("kind") != "attempt" or x.get("status") != "ok" or not x.get("time_s"):
                            continue
                        if "+" in name or not name.startswith("gemm_"):
                            continue  # one GEMM stage: its estimate is the stage's row of `space`
                        t = estimate(a.bin, a.gpu, name, c["program"], tmp)
                        if t is not None:
                            rows.append({"name": name, "time": x["time_s"], "new": t, "old": c.get("predicted_s", 0)})
                if len(rows) < a.min:
                    continue
                so, n = pairs(rows, lambda r: r["old"])
                sn, _ = pairs(rows, lambda r: r["new"])
                total_old += so
                total_new += sn
                first = min(rows, key=lambda r: r["new"])
                fastest = min(rows, key=lambda r: r["time"])
                print(f"{out} {problem:34s} n={len(rows):2d} "
                      f"tau run {so / max(n, 1):+.2f} now {sn / max(n, 1):+.2f}; first-ranked "
                      f"{first['time'] / fastest['time']:.2f}x the fastest ({first['name']})")
    print(f"concordant minus discordant pairs: run's ranking {total_old}, current ranking {total_new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
