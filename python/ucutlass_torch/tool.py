"""The installed ``ucutlass`` binary seen from Python (docs/python.md, "Installation"): where it is,
whether its version is this package's, and ``ucutlass optimize`` run on one problem file.

The binary is found at, in order: the ``binary=`` argument, ``$UCUTLASS_BIN``, ``ucutlass`` on
PATH, and the README setup's build folder beside this package in a source checkout
(``<repo>/build/ucutlass``). Its ``--version`` must name this package's version (both come from
one source tree); a mismatch is a :class:`ToolError`, since the optimizer drives this package's
extractor and worker and they must agree on every file format.

Running it goes through :data:`Runner` (``run(argv) -> (returncode, stdout+stderr)``), which a
test replaces with a fake: nothing here needs a GPU or a built binary to be tested.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import __version__

REPO_BUILD = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "ucutlass"))
PROFILES = ("default", "kb-v01")
POLICIES = ("exact", "tf32", "bf16")

Runner = Callable[[Sequence[str]], Tuple[int, str]]


class ToolError(RuntimeError):
    """The binary is missing, of another version, or failed (the message has its output's tail)."""


def subprocess_runner(argv: Sequence[str]) -> Tuple[int, str]:
    p = subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def cache_root() -> str:
    """The tool's cache folder, as the binary picks it: UCUTLASS_CACHE, else
    $XDG_CACHE_HOME/ucutlass, else ~/.cache/ucutlass."""
    return os.environ.get("UCUTLASS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "ucutlass")


def find_binary(binary: Optional[str] = None) -> str:
    """The ucutlass binary's path (see the module's header for the order); ToolError if none."""
    if binary:
        if os.path.isfile(binary) and os.access(binary, os.X_OK):
            return binary
        raise ToolError(f"{binary}: no such executable")
    for c in (os.environ.get("UCUTLASS_BIN"), shutil.which("ucutlass"), REPO_BUILD):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise ToolError("no ucutlass binary: put it on PATH, set UCUTLASS_BIN, or build it with the README's "
                    f"setup ({REPO_BUILD})")


def binary_version(binary: str, runner: Runner = subprocess_runner) -> str:
    rc, out = runner([binary, "--version"])
    m = re.match(r"\s*ucutlass\s+(\S+)", out or "")
    if rc != 0 or not m:
        raise ToolError(f"{binary} --version failed ({rc}): {(out or '').strip()[-300:]}")
    return m.group(1)


def check_binary(binary: Optional[str] = None, runner: Runner = subprocess_runner) -> str:
    """The binary's path, after checking its version against this package's."""
    path = find_binary(binary)
    version = binary_version(path, runner)
    if version != __version__:
        raise ToolError(f"{path} is ucutlass {version}, this Python package is {__version__}: install both from "
                        "one checkout (docs/python.md)")
    return path


@dataclass
class SearchOptions:
    """What a search may spend and under which contract (the CLI's flags of the same names).
    ``budget`` attempts (0: none, nothing is searched: only results already known are used;
    the CLI itself has no memory-only mode, its ``--budget 0`` means no attempt limit),
    ``minutes`` of wall time (0: no limit), the contract ``profile`` and precision ``policy``, and
    ``db`` (the result store holding the memory; None: the CLI's default)."""

    budget: int = 40
    minutes: float = 0.0
    profile: str = "default"
    policy: str = "tf32"
    db: Optional[str] = None
    extra: List[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise ValueError(f"profile {self.profile!r}: one of {', '.join(PROFILES)}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy {self.policy!r}: one of {', '.join(POLICIES)}")
        if self.budget < 0 or self.minutes < 0:
            raise ValueError("budget and minutes are >= 0")

    @property
    def searches(self) -> bool:
        return self.budget > 0

    def flags(self) -> List[str]:
        f = ["--budget", str(self.budget), "--profile", self.profile, "--policy", self.policy]
        if self.minutes:
            f += ["--time-budget", repr(float(self.minutes))]
        if self.db:
            f += ["--db", self.db]
        return f + list(self.extra)

    def key(self) -> Dict[str, Any]:
        """What changes which kernel is right: the contract (not the budget)."""
        return {"profile": self.profile, "policy": self.policy}


@dataclass
class SearchResult:
    """One ``ucutlass optimize`` run: its report.json, and the library when it kept a kernel."""

    problem: str
    out_dir: str
    report: Dict[str, Any]
    so: Optional[str]
    log: str = ""

    @property
    def kind(self) -> str:
        return str((self.report.get("result") or {}).get("kind", "none"))

    @property
    def speedup(self) -> float:
        best = self.report.get("best") or {}
        return float(best.get("speedup") or 1.0) if self.so else 1.0

    @property
    def frac_sol(self) -> float:
        best = self.report.get("best") or {}
        return float(best.get("frac_sol") or 0.0) if self.so else 0.0

    @property
    def worst_stage(self) -> str:
        """The kept kernel's stage most above its floor ("s9 gemm 2.1 ms, floor 0.2 ms"), from its
        per-stage profile (docs/eval-contract.md, "Per-stage times"); "" where none was taken."""
        w = (self.report.get("best") or {}).get("worst_stage") if self.so else None
        if not isinstance(w, dict) or not isinstance(w.get("ms"), (int, float)):
            return ""
        return f"{w.get('stage', '')} {w.get('kind', '')} {w['ms']:.3g} ms, floor {float(w.get('floor_ms') or 0):.3g} ms"


def optimize(problem_file: str, out_dir: str, options: SearchOptions, binary: str,
             runner: Runner = subprocess_runner) -> SearchResult:
    """``ucutlass optimize problem_file -o out_dir`` with the options' flags. A library is
    returned only when the search kept a correct kernel (report ``result.kind == "kernel"``); a
    plan (no GPU), a fallback or a failure leaves ``so`` None. ToolError when the binary fails
    without writing a report. ``binary``: a path :func:`check_binary` returned."""
    stem = os.path.splitext(os.path.basename(problem_file))[0]
    rc, log = runner([binary, "optimize", problem_file, "-o", out_dir] + options.flags())
    report_path = os.path.join(out_dir, stem, "report.json")
    if not os.path.exists(report_path):
        raise ToolError(f"ucutlass optimize {problem_file} failed ({rc}) without a report: {log.strip()[-600:]}")
    with open(report_path, encoding="utf-8") as f:
        report = json.load(f)
    so = os.path.join(out_dir, stem, "best.so")
    kept = report.get("result", {}).get("kind") == "kernel" and os.path.exists(so)
    return SearchResult(problem=stem, out_dir=os.path.join(out_dir, stem), report=report, so=so if kept else None,
                        log=log)
