"""The ``torch.compile`` backend ``"ucutlass"`` (docs/python.md, "The torch.compile backend").

For each graph Dynamo hands it, :class:`Backend` cuts the graph (subgraph.partition) into
subgraphs the language covers and the rest; each covered subgraph is keyed by a hash of its
canonical code, arguments and contract (subgraph.graph_key). A known key costs no search: its
result (a library, or "PyTorch stays") is read from the result cache. An unknown one is written as a
KernelBench problem file and searched by the installed binary (``ucutlass optimize``: the same
extraction, search, contract, kernel store and memory as the CLI), and the result cached. A kept
library replaces its subgraph through its custom op (library_op.py); everything else, the
replaced calls included, is compiled by Inductor (``fallback="inductor"``), run as it is
(``"eager"``), or, by default (``"auto"``), whichever of the two runs the graph faster on its
example inputs, timed on the GPU, the graph without its kernels run eagerly among the choices (a
partitioned graph can be slower end to end than the model it came from; see ``_rest``).

Options (``torch.compile(model, backend="ucutlass", options={...})``): ``budget`` (attempts per
subgraph; 0: search nothing, use only the cache), ``minutes`` (wall time of all the searches of the
model, from the first: each subgraph's search gets the time left over the graph's subgraphs still
to come), ``profile``,
``policy``, ``db`` (the memory's store), ``cache_dir``, ``binary``, ``fallback``. The CLI has no
memory-only mode (``--budget 0`` means no attempt limit there), so a zero budget never calls the
binary. Graphs traced with autograd on (an input requiring grad) go to the fallback whole: the
ops have no backward.

Importing this module registers nothing (torch's entry-point discovery loads it by name, and a
second registration is an error); :func:`register` adds the name by hand where the package is not
pip-installed.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import torch
import torch.fx as fx

from . import calibrate, library_op, runtime, subgraph, tool

NAME = "ucutlass"
OPTION_KEYS = ("budget", "minutes", "profile", "policy", "db", "cache_dir", "binary", "fallback")


def default_cache_dir() -> str:
    return os.path.join(tool.cache_root(), "torch")


class ResultCache:
    """Search results by graph key: ``<root>/<key>/result.json`` and, for a kept kernel,
    ``kernel.so`` beside it (with the problem file, its weights and the binary's output folder).
    ``extra`` roots (a saved module's folder) are read first and never written."""

    def __init__(self, root: str, extra: Optional[List[str]] = None):
        self.root = root
        self.extra = list(extra or [])

    def folder(self, key: str) -> str:
        return os.path.join(self.root, key)

    def lookup(self, key: str) -> Optional[Dict[str, Any]]:
        for root in self.extra + [self.root]:
            path = os.path.join(root, key, "result.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    res = json.load(f)
                if res.get("so"):
                    res["so"] = os.path.join(root, key, res["so"])
                res["folder"] = os.path.join(root, key)
                return res
        return None

    def store(self, key: str, result: Dict[str, Any]) -> None:
        os.makedirs(self.folder(key), exist_ok=True)
        tmp = os.path.join(self.folder(key), "result.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)
        os.replace(tmp, os.path.join(self.folder(key), "result.json"))


@dataclass
class Part:
    """One covered subgraph of one Dynamo graph, as the report shows it."""

    graph: int
    name: str
    ops: List[str]
    key: str = ""
    status: str = ""          # kernel | pytorch | not searched | error
    searched: bool = False    # this call ran the binary (else the cache answered)
    speedup: float = 1.0      # the kernel over eager on this subgraph (the search's measurement)
    frac_sol: float = 0.0
    op: str = ""              # the custom op's qualified name
    detail: str = ""
    worst_stage: str = ""     # the kernel's stage most above its floor (SearchResult.worst_stage)


@dataclass
class Report:
    """What the backend did: every covered subgraph, and the operations left to the fallback."""

    parts: List[Part] = field(default_factory=list)
    uncovered: Dict[str, int] = field(default_factory=dict)  # reason -> node count
    graphs: int = 0
    paths: List[str] = field(default_factory=list)  # fallback="auto": what each graph runs, and why

    def kernels(self) -> List[Part]:
        return [p for p in self.parts if p.status == "kernel"]

    def to_json(self) -> Dict[str, Any]:
        return {"graphs": self.graphs, "parts": [vars(p) for p in self.parts], "uncovered": self.uncovered,
                "paths": self.paths}

    def __str__(self) -> str:
        lines = [f"ucutlass: {self.graphs} graph(s), {len(self.parts)} covered subgraph(s), "
                 f"{len(self.kernels())} running μCUTLASS kernels"]
        for p in self.parts:
            where = "searched" if p.searched else "known" if p.status in ("kernel", "pytorch") else ""
            perf = f"{p.speedup:.2f}x over eager, {100 * p.frac_sol:.0f}% of SOL" if p.status == "kernel" else p.detail
            if p.status == "kernel" and p.worst_stage:
                perf += f"; most above its floor: {p.worst_stage}"
            why = "; ".join(w for w in (where, perf) if w)
            lines.append(f"  graph {p.graph} {p.name} [{', '.join(p.ops)}] key {p.key[:12]}: {p.status}"
                         f"{' (' + why + ')' if why else ''}{' -> ' + p.op if p.op else ''}")
        for why, n in sorted(self.uncovered.items()):
            lines.append(f"  left to the fallback: {n} node(s): {why}")
        lines += [f"  {p}" for p in self.paths]
        return "\n".join(lines)


class GraphCall(torch.nn.Module):
    """Replaces one covered subgraph: takes its arguments in graph order, passes the inputs and
    the weights (bound by the problem's parameter names) to the custom op, returns the outputs in
    the graph's shapes and dtypes."""

    def __init__(self, op: library_op.LibraryOp, spec: subgraph.Spec):
        super().__init__()
        self.library_op = op
        self.roles = [(a["name"], a["role"]) for a in spec.args]
        self.outputs = spec.outputs
        self.multi = spec.multi_output
        # Read once, not on every forward (a model calls this on each of its own calls).
        self.input_at = [i for i, (_, role) in enumerate(self.roles) if role == "input"]
        self.param_at = [(name, i) for i, (name, role) in enumerate(self.roles) if role == "param"]
        self.out_as = [(torch.Size(r["shape"]), runtime.DTYPES[r["dtype"]]) for r in self.outputs]

    def forward(self, *args):
        inputs = [args[i] for i in self.input_at]
        params = {name: args[i] for name, i in self.param_at}
        outs = self.library_op(inputs, params)
        outs = [o if o.shape == shape and o.dtype == dt else runtime.as_reference(o, r["shape"], r["dtype"])
                for o, (shape, dt), r in zip(outs, self.out_as, self.outputs)]
        return tuple(outs) if self.multi else outs[0]


def _is_weight(node: fx.Node, value: Any) -> bool:
    return isinstance(value, torch.nn.Parameter) or "_buffers_" in node.name or "_parameters_" in node.name


FALLBACKS = ("auto", "inductor", "eager")
# What fallback="auto" times: warm-up calls, then the median of this many (CUDA events).
AUTO_WARMUP, AUTO_REPS = 3, 10
# Nodes whose second run changes state or results: in-place changes (subgraph.mutates) and random
# numbers (an extra run moves the generator). A graph that has one is never run for timing: "auto"
# then takes Inductor.
_RANDOM_WORDS = ("rand", "dropout", "bernoulli", "normal", "multinomial", "uniform", "exponential")


def rerun_safe(gm: fx.GraphModule) -> Optional[str]:
    """Why running ``gm`` more than once is not safe (the first such node), or None."""
    for n in gm.graph.nodes:
        if n.op not in ("call_function", "call_method"):
            continue
        name = subgraph.call_name(n)
        if subgraph.mutates(n):
            return f"{n.name} ({name}) changes its operands"
        if any(w in name.lower() for w in _RANDOM_WORDS):
            return f"{n.name} ({name}) draws random numbers"
    return None


def cuda_timer(label: str, fn: Callable, args: List[Any]) -> Optional[float]:
    """Milliseconds of one call of ``fn`` on ``args`` (median of AUTO_REPS after AUTO_WARMUP, CUDA
    events on the current stream), or None where nothing runs on a GPU."""
    if not torch.cuda.is_available() or not any(isinstance(a, torch.Tensor) and a.is_cuda for a in args):
        return None
    with torch.no_grad():
        return calibrate.median_ms(torch, lambda: call_graph(fn, args), AUTO_REPS, warmup=AUTO_WARMUP)


WITHOUT_KERNELS = "eager without its kernels"


def call_graph(fn: Callable, args) -> Any:
    """Calls a graph as Dynamo calls a backend's result: its arguments positional (compile_fx's
    result marks itself ``_boxed_call`` but takes them so too, on torch 2.11)."""
    return fn(*args)


class AutoPath:
    """``fallback="auto"``'s graph: at its first call, times Inductor around the kernels, the same
    graph run eagerly and the graph without its kernels run eagerly (Backend.choose), then runs the
    fastest from then on."""

    def __init__(self, owner: "Backend", index: int, inductor: Callable, eager: Callable, without: Callable):
        self.owner, self.index = owner, index
        self.choices = [("Inductor", inductor), ("eager", eager), (WITHOUT_KERNELS, without)]
        self.chosen: Optional[Callable] = None

    def __call__(self, *args):
        if self.chosen is None:
            self.chosen = self.owner.choose(self.index, self.choices, list(args))
            self.choices = []
        return call_graph(self.chosen, args)


class Backend:
    """The backend object: ``Backend(...)(gm, example_inputs)`` is what torch.compile calls.
    ``runner``, ``load_library`` and ``timer`` replace the binary, the library loader and the
    GPU timing of ``fallback="auto"`` (tests)."""

    def __init__(self, options: Optional[tool.SearchOptions] = None, cache_dir: Optional[str] = None,
                 binary: Optional[str] = None, fallback: str = "auto", runner: Optional[tool.Runner] = None,
                 load_library: Optional[Callable[[str], library_op.LibraryOp]] = None,
                 extra_cache: Optional[List[str]] = None,
                 timer: Callable[[str, Callable, List[Any]], Optional[float]] = cuda_timer):
        if fallback not in FALLBACKS:
            raise ValueError(f"fallback {fallback!r}: one of {', '.join(FALLBACKS)}")
        self.options = options or tool.SearchOptions()
        self.cache = ResultCache(cache_dir or default_cache_dir(), extra_cache)
        self.binary = binary
        self.fallback = fallback
        self.runner = runner
        self.load_library = load_library or library_op.load
        self.timer = timer
        self.report = Report()
        self.used_keys: List[str] = []
        self._checked_binary: Optional[str] = None
        # ``minutes`` is the whole model's: it starts at the first search and is shared out
        # among the graph's subgraphs still to come (a known one costs nothing and leaves its share).
        self._deadline: Optional[float] = None

    # -- torch.compile's entry ---------------------------------------------------------------------
    def __call__(self, gm: fx.GraphModule, example_inputs: List[Any]):
        index = self.report.graphs
        self.report.graphs += 1
        if torch.is_grad_enabled() and any(isinstance(x, torch.Tensor) and x.requires_grad for x in example_inputs):
            self.report.uncovered["a graph traced for training (the kernels have no backward)"] = len(gm.graph.nodes)
            return self._rest(gm, example_inputs)
        weights = {}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        for n, v in zip(placeholders, example_inputs):
            weights[n.name] = (_is_weight(n, v), v)
        hazards = subgraph.mutation_hazards(gm)
        for n in gm.graph.nodes:
            if n.op in ("call_function", "call_method"):
                why = subgraph.why_unsupported(n) or hazards.get(n, "")
                if why:
                    self.report.uncovered[why] = self.report.uncovered.get(why, 0) + 1
        # Dynamo's inputs carry their sources on the placeholder nodes, which Inductor's front end
        # requires of a graph from Dynamo; the partition makes new nodes: they get them back.
        sources = {n.name: n._dynamo_source for n in placeholders if hasattr(n, "_dynamo_source")}
        # The graph as Dynamo gave it: run eagerly, one of "auto"'s choices, and what runs (under
        # every fallback) when none of its parts became a kernel. The partition rewrites gm in
        # place; this copy shares its submodules and attributes (no weight is copied).
        original = fx.GraphModule(gm, copy.deepcopy(gm.graph))
        fused, names = subgraph.partition(gm, hazards)
        for g in (fused, original):
            for n in g.graph.find_nodes(op="placeholder"):
                if n.name in sources and not hasattr(n, "_dynamo_source"):
                    n._dynamo_source = sources[n.name]
        calls = [n for n in fused.graph.nodes if n.op == "call_module" and n.target in names]
        for i, call in enumerate(calls):
            self._replace(fused, call, weights, index, parts_left=len(calls) - i)
        if calls and not any(p.graph == index and p.status == "kernel" for p in self.report.parts):
            # Every part kept PyTorch: the partitioned graph would only add its submodule calls
            # (at batch 1 a launch-bound graph pays for each: the bf16 GPT block, run DS).
            return self._rest(original, example_inputs, original, index)
        fused.recompile()
        return self._rest(fused, example_inputs, original, index)

    def _rest(self, gm: fx.GraphModule, example_inputs: List[Any], original: Optional[fx.GraphModule] = None,
              index: int = 0):
        if self.fallback == "eager":
            return gm.forward
        from torch._inductor.compile_fx import compile_fx
        compiled = compile_fx(gm, example_inputs)
        if self.fallback == "inductor" or original is None:
            return compiled
        # "auto": Inductor around the kernels, the same graph run eagerly (Inductor's own code can
        # be slower than eager: the bf16 GPT block at batch 1, docs/benchmarks.md runs CZ and DC),
        # or the graph without the kernels run eagerly (when they cost more end to end than they
        # gained alone); the fastest on the first call's inputs, timed then (not here: Dynamo
        # calls a backend while it traces, where operations run on fake tensors).
        unsafe = rerun_safe(original)
        if unsafe:
            self.report.paths.append(f"graph {index}: Inductor (not timed: {unsafe})")
            return compiled
        return AutoPath(self, index, compiled, gm.forward, original.forward)

    def choose(self, index: int, choices: List[Any], args: List[Any]) -> Callable:
        """``fallback="auto"``'s choice for graph ``index`` among ``(label, fn)`` ``choices``, each
        timed on ``args``; the report says which and why."""
        mine = [p for p in self.report.parts if p.graph == index and p.status == "kernel"]
        if not mine:
            choices = [c for c in choices if c[0] != WITHOUT_KERNELS]
        # Two passes, the second in reverse order, each choice's faster one kept: a launch-bound
        # graph's time drifts with the host's state (clocks, caches), and whichever ran first
        # would otherwise carry the drift.
        best: Dict[str, float] = {}
        failed = set()
        for order in (choices, choices[::-1]):
            for label, fn in order:
                if label in failed:
                    continue
                try:
                    t = self.timer(label, fn, args)
                except Exception as e:  # noqa: BLE001 - a choice that fails to run is not taken
                    self.report.paths.append(f"graph {index}: {label} failed when timed: {str(e)[-200:]}")
                    failed.add(label)
                    continue
                if t is None:  # nothing to time on (the CPU): Inductor, as "inductor" would
                    self.report.paths.append(f"graph {index}: Inductor (not timed: no GPU inputs)")
                    return choices[0][1]
                best[label] = min(t, best.get(label, t))
        times = [(best[label], label, fn) for label, fn in choices if label in best]
        if not times:
            return choices[0][1]
        _, best_label, best_fn = min(times, key=lambda x: x[0])
        measured = ", ".join(f"{label} {t:.3f} ms" for t, label, _ in times)
        self.report.paths.append(f"graph {index}: {best_label} ({measured})")
        if best_label == WITHOUT_KERNELS:
            for p in mine:
                p.status = "pytorch"
                p.detail = f"kernel not used: the graph ran faster without it ({measured})"
                p.op = ""
        return best_fn

    # -- one covered subgraph ----------------------------------------------------------------------
    def _replace(self, gm: fx.GraphModule, call: fx.Node, weights: Dict[str, Any], index: int,
                 parts_left: int = 1) -> None:
        """Searches (or looks up) one covered subgraph and puts its kernel in; ``parts_left``: the
        covered subgraphs of this graph from this one on, which share the time left (share)."""
        sub = getattr(gm, str(call.target))
        ops = [subgraph.op_name(n) or n.op for n in sub.graph.nodes if n.op in ("call_function", "call_method")]
        part = Part(graph=index, name=str(call.target), ops=ops)
        self.report.parts.append(part)
        flags, values = [], []
        for a in call.args:
            is_weight, value = weights.get(a.name, (False, None)) if a.op == "placeholder" else (False, None)
            flags.append(is_weight)
            values.append(value if isinstance(value, torch.Tensor) else _stand_in_value(a))
        try:
            spec = subgraph.canonical(sub, flags)
        except ValueError as e:
            part.status, part.detail = "pytorch", f"not writable as a problem: {e}"
            return
        part.key = subgraph.graph_key(spec, self.options.key())
        result = self.cache.lookup(part.key)
        if result is None:
            if not self.options.searches:
                part.status, part.detail = "not searched", "budget 0 and no earlier result"
                return
            try:
                result = self._search(part.key, spec, values, parts_left)
            except (tool.ToolError, OSError) as e:
                part.status, part.detail = "error", str(e)[-300:]
                return
            part.searched = True
        self.used_keys.append(part.key)
        if result.get("kind") != "kernel" or not result.get("so"):
            part.status, part.detail = "pytorch", str(result.get("text", result.get("kind", "")))
            return
        try:
            op = self.load_library(result["so"])
            replacement = GraphCall(op, spec)
        except (runtime.LibraryError, runtime.BindError, OSError, ValueError) as e:
            part.status, part.detail = "error", f"loading {result['so']}: {e}"
            return
        setattr(gm, str(call.target), replacement)
        part.status, part.op = "kernel", op.qualname
        part.speedup, part.frac_sol = float(result.get("speedup", 1.0)), float(result.get("frac_sol", 0.0))
        part.worst_stage = str(result.get("worst_stage", ""))

    def share(self, parts_left: int = 1) -> tool.SearchOptions:
        """The options of the next search: ``minutes`` is the time left until the model's deadline
        over the ``parts_left`` subgraphs of this graph still to come (at least 0.5 minutes each:
        the binary needs time to extract and measure anything)."""
        if not self.options.minutes:
            return self.options
        now = time.monotonic()
        if self._deadline is None:
            self._deadline = now + 60 * self.options.minutes
        # (now + 60 m) - now can round a hair above 60 m: never more than the model's minutes
        left = min(float(self.options.minutes), max(0.0, self._deadline - now) / 60)
        return dataclasses.replace(self.options, minutes=max(0.5, left / max(1, parts_left)))

    def _search(self, key: str, spec: subgraph.Spec, values: List[torch.Tensor],
                parts_left: int = 1) -> Dict[str, Any]:
        folder = self.cache.folder(key)
        stem = "g_" + key[:12]
        problem = subgraph.write_problem(spec, values, folder, stem, origin=f"graph key {key[:12]}")
        if self.runner is None:
            if self._checked_binary is None:
                self._checked_binary = tool.check_binary(self.binary)
            binary, runner = self._checked_binary, tool.subprocess_runner
        else:
            binary, runner = self.binary or "ucutlass", self.runner
        found = tool.optimize(problem, os.path.join(folder, "out"), self.share(parts_left), binary, runner)
        result: Dict[str, Any] = {"kind": found.kind, "text": (found.report.get("result") or {}).get("text", ""),
                                  "problem": os.path.basename(problem), "report": os.path.relpath(
                                      os.path.join(found.out_dir, "report.json"), folder)}
        if found.so:
            shutil.copyfile(found.so, os.path.join(folder, "kernel.so"))
            result.update(so="kernel.so", speedup=found.speedup, frac_sol=found.frac_sol, worst_stage=found.worst_stage)
        # Only a measured outcome is kept: a kernel, or PyTorch kept because nothing beat it. A
        # plan (no GPU) or a search that measured nothing (the problem did not load, a crash) is
        # searched again next time instead of standing as "PyTorch" for good.
        if found.kind in ("kernel", "fallback"):
            self.cache.store(key, result)
        if found.so:
            result["so"] = os.path.join(folder, "kernel.so")
        return result


def _stand_in_value(node: fx.Node) -> torch.Tensor:
    """A value for an argument computed inside the graph (only its shape and dtype are known
    here): zeros, which the problem file saves for non-floating inputs (indices stay in range)."""
    v = subgraph.example_value(node)
    return torch.zeros(tuple(v.shape), dtype=v.dtype)


def backend_from_options(options: Optional[Dict[str, Any]] = None) -> Backend:
    options = dict(options or {})
    unknown = sorted(set(options) - set(OPTION_KEYS))
    if unknown:
        raise ValueError(f"unknown ucutlass backend option(s) {unknown}; known: {', '.join(OPTION_KEYS)}")
    search = tool.SearchOptions(budget=int(options.get("budget", 40)), minutes=float(options.get("minutes", 0.0)),
                                profile=options.get("profile", "default"), policy=options.get("policy", "tf32"),
                                db=options.get("db"))
    return Backend(search, cache_dir=options.get("cache_dir"), binary=options.get("binary"),
                   fallback=options.get("fallback", "auto"))


def ucutlass_backend(gm: fx.GraphModule, example_inputs: List[Any], options: Optional[Dict[str, Any]] = None,
                     **_: Any):
    """The function torch.compile calls for ``backend="ucutlass"``; ``options`` as in the header."""
    return backend_from_options(options)(gm, example_inputs)


def register() -> None:
    """Registers ``backend="ucutlass"`` with Dynamo (once; pip installs do it by entry point)."""
    from torch._dynamo.backends import registry
    if NAME not in getattr(registry, "_COMPILER_FNS", {}):
        registry.register_backend(compiler_fn=ucutlass_backend, name=NAME)
