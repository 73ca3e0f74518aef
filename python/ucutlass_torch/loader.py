"""Loading KernelBench-format problem files.

A problem file defines ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``
(see docs/problem-ir.md). This module loads such a file into an isolated module namespace (it is
never inserted into ``sys.modules`` under a name that could clash with a real module), checks the
three names exist, and builds the model and its inputs the way KernelBench does: the model under
``torch.manual_seed(seed)`` from ``Model(*get_init_inputs())``, the inputs under a seed from
``get_inputs()``.

Every failure is a :class:`ProblemError` whose message names the file, what is wrong and how to fix
it. Nothing here touches a GPU unless a caller asks for ``device="cuda"``.
"""

from __future__ import annotations

import contextlib

import ast
import hashlib
import importlib.util
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

__all__ = [
    "ProblemError",
    "LoadedProblem",
    "load_problem",
    "iter_problems",
    "problem_files",
    "build_model",
    "make_inputs",
    "user_frame_line",
]

REQUIRED = ("Model", "get_inputs", "get_init_inputs")


class ProblemError(Exception):
    """A problem file cannot be loaded, built or traced; the message says where, what and the fix."""

    def __init__(self, path: str | os.PathLike | None, message: str, hint: str = "", line: int = 0):
        self.path = str(path) if path is not None else ""
        self.message = message
        self.hint = hint
        self.line = line
        where = self.path
        if where and line:
            where = f"{where}:{line}"
        text = f"{where}: error: {message}" if where else f"error: {message}"
        if hint:
            text += f"\nhint: {hint}"
        super().__init__(text)


@dataclass
class LoadedProblem:
    name: str                      # file stem
    path: str                      # path as given
    source_sha256: str             # SHA-256 of the file's bytes
    doc: str                       # first line of the module docstring, or ""
    module: types.ModuleType       # the executed module
    Model: type                    # the nn.Module subclass
    get_inputs: Callable[[], Any]
    get_init_inputs: Callable[[], Any]
    init_inputs: List[Any] = field(default_factory=list)  # get_init_inputs() as called at load time
    source: str = ""               # file text


def user_frame_line(tb_or_frames, path: str) -> int:
    """The last line number in ``path`` among the traceback frames, or 0."""
    frames = tb_or_frames
    if isinstance(tb_or_frames, types.TracebackType):
        frames = traceback.extract_tb(tb_or_frames)
    real = os.path.realpath(path)
    line = 0
    for fr in frames:
        try:
            if os.path.realpath(fr.filename) == real:
                line = fr.lineno or 0
        except (OSError, ValueError):
            continue
    return line


def _module_name(path: Path, digest: str) -> str:
    stem = "".join(c if c.isalnum() else "_" for c in path.stem)
    return f"_ucutlass_problem_{stem}_{digest[:12]}"


def load_problem(path: str | os.PathLike, call_init_inputs: bool = True) -> LoadedProblem:
    """Executes a KernelBench-format file in a fresh module and returns its three entry points.

    ``call_init_inputs``: call ``get_init_inputs()`` now and keep the result in ``init_inputs``
    (constructor arguments are small; set False when they must be built under a special context).
    """
    p = Path(path)
    if not p.exists():
        raise ProblemError(path, "no such file", "check the path; pass a KernelBench-format .py file")
    if p.is_dir():
        raise ProblemError(path, "is a folder, not a problem file",
                           "use iter_problems() for folders, or name one .py file")
    if p.suffix != ".py":
        raise ProblemError(path, "not a Python file (expected a .py file in KernelBench format)",
                           "a problem file defines class Model, get_inputs() and get_init_inputs()")
    data = p.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProblemError(path, f"file is not UTF-8 text ({e.reason} at byte {e.start})",
                           "save the file as UTF-8")
    try:
        tree = ast.parse(source, filename=str(p))
    except SyntaxError as e:
        raise ProblemError(path, f"syntax error: {e.msg}", "fix the Python syntax", line=e.lineno or 0)
    doc = ast.get_docstring(tree) or ""
    doc = doc.strip().splitlines()[0].strip() if doc.strip() else ""

    modname = _module_name(p, digest)
    spec = importlib.util.spec_from_file_location(modname, str(p))
    if spec is None or spec.loader is None:  # pragma: no cover - spec_from_file_location on .py
        raise ProblemError(path, "cannot create a module for this file")
    module = importlib.util.module_from_spec(spec)
    # Registered only while executing (dataclasses/pickling look the module up), then removed so
    # loading many problems does not accumulate modules.
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        raise ProblemError(path, f"the file called exit({e.code}) while loading",
                           "a problem file must not exit at import time")
    except BaseException as e:  # noqa: BLE001 - any failure of user code is reported, not raised
        if not isinstance(e, Exception):
            raise  # an interrupt (Ctrl-C, the extraction's time limit), not the file's failure
        line = user_frame_line(e.__traceback__, str(p))
        if isinstance(e, ModuleNotFoundError) and e.name:
            top = e.name.split(".")[0]
            raise ProblemError(path, f"the file imports `{e.name}`, which {sys.executable} cannot find",
                               f"install the package that provides `{top}` into that Python (e.g. "
                               f"`{sys.executable} -m pip install {top}`), or set UCUTLASS_PYTHON to a Python "
                               "that has it", line=line) from e
        raise ProblemError(path, f"executing the file failed: {type(e).__name__}: {e}",
                           "the file must import and run top-level code without errors",
                           line=line) from e
    finally:
        sys.modules.pop(modname, None)

    missing = [n for n in REQUIRED if not hasattr(module, n)]
    if missing:
        fixes = {
            "Model": "define `class Model(nn.Module)` with __init__(*init_inputs) and forward(*inputs)",
            "get_inputs": "define `def get_inputs(): return [<forward inputs>]`",
            "get_init_inputs": "define `def get_init_inputs(): return [<Model constructor args>]`"
                               " (return [] when Model takes none)",
        }
        raise ProblemError(path, "missing " + ", ".join(f"`{m}`" for m in missing)
                           + " (a KernelBench problem defines Model, get_inputs and get_init_inputs)",
                           "; ".join(fixes[m] for m in missing))
    Model = module.Model
    try:
        import torch.nn as nn
        is_module = isinstance(Model, type) and issubclass(Model, nn.Module)
    except ImportError:  # pragma: no cover
        is_module = isinstance(Model, type)
    if not is_module:
        raise ProblemError(path, f"`Model` is a {type(Model).__name__}, not a subclass of torch.nn.Module",
                           "define `class Model(nn.Module)`")
    for fn in ("get_inputs", "get_init_inputs"):
        if not callable(getattr(module, fn)):
            raise ProblemError(path, f"`{fn}` is not callable", f"define `def {fn}(): return [...]`")

    lp = LoadedProblem(name=p.stem, path=str(path), source_sha256=digest, doc=doc, module=module,
                       Model=Model, get_inputs=module.get_inputs,
                       get_init_inputs=module.get_init_inputs, source=source)
    if call_init_inputs:
        lp.init_inputs = call_user(lp, "get_init_inputs", lp.get_init_inputs)
    return lp


def call_user(lp: LoadedProblem, what: str, fn: Callable[[], Any]) -> List[Any]:
    """Calls get_inputs/get_init_inputs and normalises the result to a list, with clear errors."""
    try:
        value = fn()
    except Exception as e:  # noqa: BLE001
        line = user_frame_line(e.__traceback__, lp.path)
        raise ProblemError(lp.path, f"{what}() raised {type(e).__name__}: {e}",
                           f"make {what}() run without arguments and return a list", line=line) from e
    if value is None:
        raise ProblemError(lp.path, f"{what}() returned None", f"return a list from {what}() (e.g. [] or [x])")
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ProblemError(lp.path, f"{what}() returned a {type(value).__name__}, not a list",
                       f"return a list from {what}(), e.g. `return [x]`")


def build_model(loaded: LoadedProblem, seed: int = 42, device: str = "cpu", dtype=None):
    """``Model(*get_init_inputs())`` under ``torch.manual_seed(seed)``, moved to device/dtype, in
    eval mode. ``get_init_inputs()`` is called again under the same seed (KernelBench does the same).
    The model's own conversions (``nn.Linear(a, b).half()``) stay; the devices it names
    (``.cuda()``, ``.to("cuda")``) mean ``device`` (placement.Redirect)."""
    import torch

    torch.manual_seed(seed)
    init = call_user(loaded, "get_init_inputs", loaded.get_init_inputs)
    loaded.init_inputs = init
    torch.manual_seed(seed)
    try:
        # Parameters are created (and initialised) on the target device directly: nn.Linear(8192,
        # 8192) takes ~0.6 s to initialise on a CPU and milliseconds on a GPU.
        with _placed(device):
            model = loaded.Model(*init)
    except Exception as e:  # noqa: BLE001
        line = user_frame_line(e.__traceback__, loaded.path)
        raise ProblemError(loaded.path, f"Model(*get_init_inputs()) raised {type(e).__name__}: {e}",
                           "check that get_init_inputs() returns the constructor arguments of Model",
                           line=line) from e
    if dtype is not None:
        model = model.to(dtype=dtype)
    if device is not None:
        model = model.to(device=device)
    model.eval()
    return model


def _placed(device: Optional[str]) -> contextlib.ExitStack:
    """Where Model() and get_inputs() build: factories default to ``device`` when it is a CUDA
    device (the CPU is torch's default anyway), and every device the file names means ``device``
    (placement.Redirect). None: as the file says."""
    import torch

    from .placement import Redirect

    stack = contextlib.ExitStack()
    if device is not None:
        if str(device).startswith("cuda"):
            stack.enter_context(torch.device(device))
        stack.enter_context(Redirect(device))
    return stack


def make_inputs(loaded: LoadedProblem, seed: int = 42, device: Optional[str] = "cpu", dtype=None) -> List[Any]:
    """``get_inputs()`` under ``torch.manual_seed(seed)``; tensors moved to device (and floating
    tensors cast to dtype when given). Non-tensor values pass through. The devices get_inputs()
    names (``torch.randn(..., device="cuda")``) mean ``device``."""
    import torch

    torch.manual_seed(seed)
    # Factory calls in get_inputs() (torch.randn, ...) allocate on the target device: a 1 GB
    # torch.randn takes seconds on a CPU. The values differ from a CPU draw under the same seed,
    # but every party (reference, candidate, baselines) sees the same tensors.
    with _placed(device):
        values = call_user(loaded, "get_inputs", loaded.get_inputs)
    out = []
    for v in values:
        if isinstance(v, torch.Tensor):
            if dtype is not None and v.is_floating_point():
                v = v.to(dtype=dtype)
            if device is not None:
                v = v.to(device=device)
        out.append(v)
    return out


_SKIP_DIRS = {"__pycache__", ".git", ".venv", "node_modules"}


def problem_files(path: str | os.PathLike) -> List[Path]:
    """The problem files under ``path``: the file itself; the *.py files of a folder (sorted, files
    starting with '_' skipped); for a KernelBench checkout (a folder holding level1/, level2/, ... or
    KernelBench/level1/...), the files of every level folder in level order."""
    p = Path(path)
    if not p.exists():
        raise ProblemError(path, "no such file or folder", "pass a problem .py file, a folder of them, "
                           "or a KernelBench checkout")
    if p.is_file():
        return [p]
    if (p / "KernelBench").is_dir() and not any(p.glob("level*")):
        p = p / "KernelBench"
    levels = sorted((d for d in p.iterdir() if d.is_dir() and d.name.startswith("level")
                     and d.name[5:].isdigit()), key=lambda d: int(d.name[5:]))
    if levels:
        files: List[Path] = []
        for d in levels:
            files.extend(_sorted_py(d))
        return files
    return _sorted_py(p)


def _sorted_py(d: Path) -> List[Path]:
    def key(f: Path):
        # KernelBench names files "<id>_<Name>.py": order by the numeric id when there is one.
        head = f.name.split("_", 1)[0]
        return (0, int(head), f.name) if head.isdigit() else (1, 0, f.name)

    return sorted((f for f in d.iterdir() if f.is_file() and f.suffix == ".py"
                   and not f.name.startswith("_") and f.parent.name not in _SKIP_DIRS), key=key)


def iter_problems(path: str | os.PathLike, call_init_inputs: bool = True) -> Iterator[LoadedProblem]:
    """Loads every problem under ``path`` (see problem_files). Raises ProblemError on the first bad
    file; callers wanting to continue use problem_files() and load_problem() themselves."""
    for f in problem_files(path):
        yield load_problem(f, call_init_inputs=call_init_inputs)
