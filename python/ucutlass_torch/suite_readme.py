"""Prints problems/README.md: the suite's problems grouped by family with their one-line docstrings.

    python -m ucutlass_torch.suite_readme problems > problems/README.md

Reads the files with ast (no torch import, nothing executed).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

FAMILIES = [("gemm_", "Plain GEMMs"), ("epi_", "GEMM + elementwise epilogue"), ("gred_", "GEMM + row reduction"),
            ("act_", "Activations (memory bound)"), ("red_", "Softmax and reductions"), ("norm_", "Normalisation"),
            ("scan_", "Scans"), ("loss_", "Losses"), ("attn_", "Attention"),
            ("kb1_", "KernelBench level 1, at its sizes"), ("kb2_", "KernelBench level 2 (GEMM + epilogue), at its sizes"),
            ("kb3_", "KernelBench level 3, at its sizes"),
            ("cv1_", "Convolution and pooling (KernelBench level 1 shapes)"),
            ("cv2_", "Convolution + epilogue (KernelBench level 2 shapes)")]


def render(root: Path) -> str:
    files = sorted(p for p in root.glob("*.py") if not p.name.startswith("_"))
    out = ["# problems/: the μCUTLASS problem suite", "",
           "KernelBench-format problems written for this project (each file: `class Model(nn.Module)`,",
           "`get_inputs()`, `get_init_inputs()`, and a one-line docstring saying what it stresses). Sizes are",
           "chosen to fill an H200 (tens of µs or more per call); fp32 unless the name says bf16/fp16.",
           "The `kb1_`, `kb2_` and `kb3_` problems mirror KernelBench's levels at its current (v0.1) shapes, sizes",
           "and input distributions, so the suite meets what outside users run (6 GiB activations, einsum,",
           "registered masks, `-inf` fills); each docstring names the KernelBench problem number.",
           "The `cv1_` and `cv2_` problems do the same for KernelBench's convolutions, pooling and conv + epilogue",
           "chains (a batch is halved where an input or output would pass 4 GiB; the docstring says so). Their",
           "prefix keeps them out of `--match 'kb*'`, the 80-problem suite of docs/benchmarks.md.",
           "`ucutlass extract problems -o out/` writes the Problem IR of all of them (no GPU needed: tensors",
           "are fake during extraction).", "",
           f"{len(files)} problems. This file is generated from the docstrings; after adding a problem run",
           "", "```", "PYTHONPATH=python .venv/bin/python -m ucutlass_torch.suite_readme problems > problems/README.md",
           "```", ""]
    groups = FAMILIES + [("", "Other")]
    seen = set()
    for prefix, title in groups:
        fs = [f for f in files if f.name.startswith(prefix) and f not in seen]
        if not fs:
            continue
        seen.update(fs)
        out += [f"## {title} ({len(fs)})", "", "| problem | what it stresses |", "|---|---|"]
        for f in fs:
            doc = ast.get_docstring(ast.parse(f.read_text())) or ""
            first = doc.strip().splitlines()[0] if doc.strip() else "(no docstring)"
            out.append(f"| `{f.stem}` | {first.replace('|', '/')} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render(Path(sys.argv[1] if len(sys.argv) > 1 else "problems")))
