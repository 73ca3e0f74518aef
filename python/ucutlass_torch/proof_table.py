"""The proof table of a bench/proof SET: one Markdown row per program evaluated by `ucutlass eval`.

    python -m ucutlass_torch.proof_table bench/proof/gemm /tmp/ucut-proof/gemm

reads NAME.records.json (the RunRecords of one `ucutlass eval` over every library built for
problem NAME, docs/results-schema.md; a record's library sits in a folder named after its program
stem NAME[.VARIANT]) and NAME.twin.json (`ucutlass
baseline --json` of the twin problem: the same-precision PyTorch equivalent where it is not the
problem's own eager code) from the results folder, and the first comment line of each program as
its description. No torch import: it formats JSON only.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional


def _load(path: Path) -> Optional[Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _first_comment(prog: Path) -> str:
    for line in prog.read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(float(v)) else None


def _fmt(v: Optional[float], spec: str) -> str:
    return "–" if v is None else format(v, spec)


def twin_ms(results: Path, problem: str) -> Optional[float]:
    doc = _load(results / f"{problem}.twin.json")
    if not isinstance(doc, dict):
        return None
    eager = (doc.get("baselines") or {}).get("eager") or {}
    return _num((eager.get("timing") or {}).get("median_ms"))


def records_by_stem(results: Path) -> Dict[str, Dict[str, Any]]:
    by_stem: Dict[str, Dict[str, Any]] = {}
    for f in sorted(results.glob("*.records.json")):
        recs = _load(f)
        for rec in recs if isinstance(recs, list) else [recs] if isinstance(recs, dict) else []:
            so = rec.get("so_path") or ""
            if so:
                by_stem[Path(so).parent.name] = rec
    return by_stem


def rows(set_dir: Path, results: Path) -> List[Dict[str, Any]]:
    out = []
    by_stem = records_by_stem(results)
    for prog in sorted(set_dir.glob("*.ucut")):
        stem = prog.name[: -len(".ucut")]
        problem = stem.split(".")[0]
        rec = by_stem.get(stem)
        if rec is None:
            err = (results / f"{problem}.eval.err")
            note = err.read_text().strip().splitlines()[-1] if err.exists() and err.read_text().strip() else "not run"
            out.append({"stem": stem, "problem": problem, "what": _first_comment(prog), "status": "not run",
                        "note": note})
            continue
        ours = _num(rec.get("median_ms"))
        tw = twin_ms(results, problem)
        out.append({
            "stem": stem, "problem": problem, "what": _first_comment(prog),
            "status": rec.get("status", "?"), "policy": rec.get("policy", ""),
            "max_abs_err": _num(rec.get("max_abs_err")), "ms": ours,
            "eager_ms": _num(rec.get("eager_ms")), "x_eager": _num(rec.get("speedup_eager")),
            "twin_ms": tw, "x_twin": (tw / ours) if (tw and ours) else None,
            "frac_sol": _num(rec.get("frac_sol")), "sol_source": rec.get("sol_source", ""),
            "config": rec.get("config", ""), "eval_s": _num(rec.get("eval_seconds")),
            "note": (rec.get("error") or "").splitlines()[0][:160] if rec.get("error") else "",
            "gpu": rec.get("gpu", ""), "commit": rec.get("tool_commit", ""), "when": rec.get("timestamp", ""),
        })
    return out


def markdown(rs: List[Dict[str, Any]]) -> str:
    lines = ["| program | covers | status | max abs err | ours ms | eager ms | × eager | same-precision torch ms | × that | % SOL | config |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rs:
        lines.append("| {stem} | {what} | {status} | {err} | {ms} | {eager} | {xe} | {tw} | {xt} | {sol} | {cfg} |".format(
            stem=r["stem"], what=r["what"], status=r["status"], err=_fmt(r.get("max_abs_err"), ".2e"),
            ms=_fmt(r.get("ms"), ".4f"), eager=_fmt(r.get("eager_ms"), ".4f"), xe=_fmt(r.get("x_eager"), ".2f"),
            tw=_fmt(r.get("twin_ms"), ".4f"), xt=_fmt(r.get("x_twin"), ".2f"),
            sol=_fmt(None if r.get("frac_sol") is None else 100 * r["frac_sol"], ".1f"),
            cfg=r.get("config", "")))
    notes = [f"- {r['stem']}: {r['note']}" for r in rs if r.get("note")]
    meta = next((r for r in rs if r.get("gpu")), None)
    if meta:
        lines.append("")
        lines.append(f"GPU {meta['gpu']}, tool commit {meta['commit'] or '?'}, first record {meta['when']}; "
                     "SOL source: " + ", ".join(sorted({r.get('sol_source') or '?' for r in rs if r.get('ms')})) + ".")
    if notes:
        lines += ["", "Notes:"] + notes
    return "\n".join(lines) + "\n"


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m ucutlass_torch.proof_table SET_DIR RESULTS_DIR", file=sys.stderr)
        return 2
    set_dir, results = Path(args[0]), Path(args[1])
    if not set_dir.is_dir():
        print(f"proof_table: no such proof set '{set_dir}'", file=sys.stderr)
        return 2
    rs = rows(set_dir, results)
    sys.stdout.write(markdown(rs))
    (results / "table.json").write_text(json.dumps(rs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
