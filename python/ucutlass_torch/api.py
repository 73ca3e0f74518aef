"""The Python API (docs/python.md): ``ucutlass_torch.optimize(model, example_inputs, ...)`` returns
a module that runs the best kernels the search found for the parts of ``model`` the language
covers and PyTorch (Inductor, or eager) for the rest, with a printable report; ``save(dir)`` and
:func:`load` keep the result, so a process restart costs no search.

It shares the backend's machinery (backend.py): the model is captured by Dynamo, each covered
subgraph is written as a problem file and searched by the installed binary (the CLI's extraction,
search, contract and memory), results are cached by graph key, and kernels run through their
custom ops.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from . import __version__, backend, library_op, tool

MANIFEST = "ucutlass-module.json"


class Optimized(torch.nn.Module):
    """``model`` compiled with the ucutlass backend. ``report`` says which parts run kernels
    (with each one's speedup over eager and % of SOL from its search); ``save(dir)`` keeps it."""

    def __init__(self, model: torch.nn.Module, be: backend.Backend, dynamic: bool = False):
        super().__init__()
        self.model = model
        self.backend = be
        self.compiled = torch.compile(model, backend=be, dynamic=dynamic)
        self.timings: Dict[str, float] = {}

    @property
    def report(self) -> backend.Report:
        return self.backend.report

    def forward(self, *args, **kwargs):
        return self.compiled(*args, **kwargs)

    def summary(self) -> str:
        text = str(self.report)
        if self.timings:
            t = self.timings
            text += (f"\n  end to end: {1e3 * t['optimized_s']:.3f} ms against eager {1e3 * t['eager_s']:.3f} ms "
                     f"({t['eager_s'] / t['optimized_s']:.2f}x)")
        return text

    def __str__(self) -> str:
        return self.summary()

    def measure(self, example_inputs: Sequence[Any], reps: int = 20) -> Dict[str, float]:
        """Median forward time of the eager model and of this module on ``example_inputs``
        (a rough end-to-end figure; the searches measured each kernel under the contract)."""
        def median(fn) -> float:
            times = []
            with torch.no_grad():
                fn()
                for _ in range(reps):
                    if torch.cuda.is_available():
                        torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    fn()
                    if torch.cuda.is_available():
                        torch.cuda.synchronize()
                    times.append(time.perf_counter() - t0)
            return sorted(times)[len(times) // 2]
        self.timings = {"eager_s": median(lambda: self.model(*example_inputs)),
                        "optimized_s": median(lambda: self.compiled(*example_inputs))}
        return self.timings

    def save(self, directory: str) -> None:
        """Copies the results this module uses (kernel libraries, problem files, reports) into
        ``directory`` with a manifest; :func:`load` runs them without a search."""
        os.makedirs(directory, exist_ok=True)
        keys = sorted(set(self.backend.used_keys))
        for key in keys:
            found = self.backend.cache.lookup(key)
            if found is None:
                continue
            dst = os.path.join(directory, key)
            if os.path.abspath(found["folder"]) != os.path.abspath(dst):
                shutil.rmtree(dst, ignore_errors=True)
                shutil.copytree(found["folder"], dst, ignore=shutil.ignore_patterns("out", "*.tmp"))
        manifest = {"schema": "ucutlass.torch-module/1", "version": __version__, "keys": keys,
                    "options": vars(self.backend.options), "fallback": self.backend.fallback,
                    "report": self.report.to_json()}
        with open(os.path.join(directory, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1)


def optimize(model: torch.nn.Module, example_inputs: Sequence[Any], *, minutes: float = 10.0,
             profile: str = "default", policy: str = "tf32", db: Optional[str] = None, budget: int = 40,
             cache_dir: Optional[str] = None, binary: Optional[str] = None, fallback: str = "auto",
             runner: Optional[tool.Runner] = None,
             load_library: Optional[Callable[[str], library_op.LibraryOp]] = None) -> Optimized:
    """Searches kernels for ``model`` on ``example_inputs`` and returns the optimized module.

    ``minutes``: the wall time of all the searches (0: no limit), shared out as they run: each
    covered subgraph's search (the CLI's ``--time-budget``) gets the time left over the subgraphs
    still to come, at least half a minute; ``budget``: attempts per subgraph (0: search nothing, use what the cache holds);
    ``profile`` and ``policy``: the contract (docs/eval-contract.md); ``db``: the memory's store.
    The search runs now, on the first forward of ``example_inputs`` (inference: no grad)."""
    options = tool.SearchOptions(budget=budget, minutes=minutes, profile=profile, policy=policy, db=db)
    be = backend.Backend(options, cache_dir=cache_dir, binary=binary, fallback=fallback, runner=runner,
                         load_library=load_library)
    module = Optimized(model, be)
    with torch.no_grad():
        module(*example_inputs)
    return module


def load(directory: str, model: torch.nn.Module, *, cache_dir: Optional[str] = None, fallback: Optional[str] = None,
         load_library: Optional[Callable[[str], library_op.LibraryOp]] = None) -> Optimized:
    """``model`` with the results saved in ``directory`` (Optimized.save): no search runs (budget
    0); a subgraph the folder does not hold runs in PyTorch. The first forward compiles."""
    with open(os.path.join(directory, MANIFEST), encoding="utf-8") as f:
        manifest = json.load(f)
    if manifest.get("version") != __version__:
        raise tool.ToolError(f"{directory} was saved by ucutlass_torch {manifest.get('version')}, this is {__version__}")
    saved = manifest.get("options", {})
    options = tool.SearchOptions(budget=0, profile=saved.get("profile", "default"), policy=saved.get("policy", "tf32"))
    be = backend.Backend(options, cache_dir=cache_dir, fallback=fallback or manifest.get("fallback", "auto"),
                         load_library=load_library, extra_cache=[os.path.abspath(directory)])
    return Optimized(model, be)
