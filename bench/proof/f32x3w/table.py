"""Markdown table of the f32x3w benchmark's rows (JSON lines from f32x3w_bench and torch_rows.py).

    python3 bench/proof/f32x3w/table.py ROWS.jsonl [...] > table.md

Rows are grouped by shape and kind (in the order they first appear), and within a group keep the
order of the variants' first appearance, so the kernels on one problem sit next to each other.
torch_rows.py imports md_row and HEADER from here, so both print the same columns.
"""
import json
import math
import sys

HEADER = (
    "| variant | shape | kind | ms | TFLOP/s | max abs err | margin@1e-4 | rel Frobenius | status |\n"
    "|---|---|---|---:|---:|---:|---:|---:|---|"
)


def _fmt(spec, v):
    return "-" if v is None or not math.isfinite(v) else format(v, spec)


def md_row(r):
    """One markdown row, formatted like f32x3w_bench's print_row."""
    cells = [r["variant"], r["shape"], r["kind"], _fmt(".3f", r.get("ms")), _fmt(".1f", r.get("tflops")),
             _fmt(".2e", r.get("max_abs_err")), _fmt(".3f", r.get("margin")), _fmt(".2e", r.get("rel_fro")),
             r["status"]]
    return "| " + " | ".join(cells) + " |"


def main(paths):
    rows = []
    for p in paths:
        with open(p) as f:
            rows += [json.loads(line) for line in f if line.strip()]
    first = {}  # (field, value) -> order of first appearance
    for r in rows:
        for field in ("shape", "kind", "variant"):
            first.setdefault((field, r[field]), len(first))
    rows.sort(key=lambda r: (first[("shape", r["shape"])], first[("kind", r["kind"])],
                             first[("variant", r["variant"])]))
    devices = sorted({r.get("device", "?") for r in rows})
    print(f"device: {', '.join(devices)}\n")
    print(HEADER)
    for r in rows:
        print(md_row(r))


if __name__ == "__main__":
    main(sys.argv[1:])
