"""The one Python runtime of a kernel library (docs/kernel-abi.md, docs/python.md): load the ``.so``
with ctypes, read ``ucut_describe()``, bind tensors to the library's declared tensor list and run
``ucut_run`` on PyTorch's current CUDA stream.

Every program that calls a library goes through this file: the evaluation worker
(kernel.CtypesKernel wraps :class:`Library`), the ``torch.library`` custom ops (library_op.py) that
the Python API and the ``torch.compile`` backend build, and the exported KernelBench ``ModelNew``
(export.py embeds this file's source and executes it, so an exported file needs nothing but torch).

Binding rules, one place for all of them:
- A tensor binds when its dtype is the declared one and its shape is the declared one or another
  shape of the same element count: the library reads the contiguous tensor in its declared shape
  (the lowering declares e.g. a LayerNorm input [B, C, H, W] as [B*C, H*W], a batched matmul's
  [8, 256, 512, 256] as [2048, 512, 256], a per-channel [C] as [C, 1, 1]).
- An output the library declares in another shape of the same element count (a 0-d loss as [1],
  a row reduction's (128,) as [128, 1]) is returned in the reference's shape and dtype.

Only the standard library and torch are imported, and the text stays within what KernelBench's
static checker accepts in a solution file (no error handlers), because export.py copies it into
model_new.py as it is. Failures raise: :class:`BindError` (a tensor does not fit) and
:class:`LibraryError` (the library cannot run; ``code`` is ucut_run's error code).
"""

import ctypes
import json
import math
import os

import torch

ABI_VERSION = 1
DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
          "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
          "u8": torch.uint8, "bool": torch.bool}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
ERROR_CODES = {1: "bad arguments", 2: "a kernel rejected the problem (can_implement)", 3: "kernel set-up failed",
               4: "a launch or CUDA call failed", 5: "workspace too small"}
SYMBOLS = ("ucut_abi_version", "ucut_describe", "ucut_last_error", "ucut_workspace_size", "ucut_run")


class BindError(ValueError):
    """A problem's tensor does not fit the library's declaration (names the tensor and why)."""


class LibraryError(RuntimeError):
    """The library cannot be used, or ucut_run returned a non-zero ``code``."""

    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code


def dtype_name(dt):
    return DTYPE_NAMES.get(dt, str(dt).replace("torch.", ""))


def check_declared(spec, t, what):
    """Raises BindError unless ``t`` binds to ``spec`` (same dtype; the declared shape or another
    of the same element count)."""
    shape = list(spec["shape"])
    if list(t.shape) != shape and t.numel() != math.prod(shape):
        raise BindError(f"{what}: kernel expects shape {shape} ({math.prod(shape)} elements), "
                        f"the problem has {list(t.shape)} ({t.numel()} elements)")
    if t.dtype != DTYPES[spec["dtype"]]:
        raise BindError(f"{what}: kernel expects {spec['dtype']}, the problem has {dtype_name(t.dtype)}")


def as_declared(spec, t, what):
    """``t`` as the library reads it: contiguous, viewed in the declared shape (checked first)."""
    check_declared(spec, t, what)
    return t.contiguous().view(spec["shape"])


def as_reference(out, shape, dtype_id):
    """A library output in the reference's shape (same element count, row-major) and dtype
    (``dtype_id``: a DTYPES name); a dtype that differs is converted."""
    shape = list(shape)
    if out.numel() != math.prod(shape):
        raise BindError(f"the kernel's output {list(out.shape)} ({out.numel()} elements) cannot be the reference's "
                        f"{shape} ({math.prod(shape)} elements)")
    dt = DTYPES[dtype_id]
    out = out.view(shape)
    return out if out.dtype == dt else out.to(dt)


def declared_tensors(describe):
    """The describe document's tensors, each with its ``index`` among its role (``in`` and ``out``
    by position when the document leaves it out), in declaration order (ucut_run's order)."""
    tensors = [dict(t) for t in describe["tensors"]]
    for role in ("in", "out"):
        for i, t in enumerate([t for t in tensors if t["role"] == role]):
            t.setdefault("index", i)
    return tensors


def outputs_of(tensors):
    """The ``out`` specs in output order (forward's return order)."""
    return sorted((t for t in tensors if t["role"] == "out"), key=lambda t: t["index"])


class Binder:
    """ucut_run's tensor list for one library's declared tensors: ``inputs`` (by ``in`` index) and
    ``params`` (binding key -> tensor) in their declared shapes, outputs allocated on ``device``;
    :meth:`bind` returns (args, outputs in output order). Each spec is read once, so a call costs a
    shape, dtype and contiguity test per tensor that already binds as it is (the common case: a
    model's own contiguous tensors), and only the others go through :func:`as_declared` and its
    messages. A library called from a model's forward pays this on every call (docs/python.md)."""

    def __init__(self, tensors):
        self.source = tensors  # the declared tensors it was made for (call() makes another if they change)
        self.n_in = sum(1 for t in tensors if t["role"] == "in")
        # (role, index or binding key, declared shape, dtype, spec) in ucut_run's order
        self.plan = [(t["role"], t["binding"] if t["role"] == "param" else t["index"], tuple(t["shape"]),
                      DTYPES[t["dtype"]], t) for t in tensors]
        outs = [i for i, t in enumerate(tensors) if t["role"] == "out"]
        self.out_order = sorted(outs, key=lambda i: tensors[i]["index"])  # positions in args, output order

    def bind(self, inputs, params, device):
        if len(inputs) != self.n_in:
            raise BindError("the kernel takes %d input tensor(s), it was given %d" % (self.n_in, len(inputs)))
        args = []
        for role, key, shape, dt, spec in self.plan:
            if role == "out":
                args.append(torch.empty(shape, dtype=dt, device=device))
                continue
            if role == "in":
                t = inputs[key]
            else:
                t = params.get(key)
                if t is None:
                    raise BindError("tensor " + spec["name"] + ": no tensor for its binding " + repr(key))
                if t.requires_grad:
                    t = t.detach()
            if t.shape == shape and t.dtype == dt and t.is_contiguous():
                args.append(t)
            else:
                what = "tensor " + spec["name"] + ("" if role == "in" else " (" + key + ")")
                args.append(as_declared(spec, t, what))
        return args, [args[i] for i in self.out_order]


class Workspaces:
    """One workspace per device, allocated on first use and reused by every call (ucut_run
    enqueues on one stream, so calls on that stream never overlap)."""

    def __init__(self, nbytes):
        self.nbytes = int(nbytes)
        self.by_device = {}

    def get(self, device):
        if not self.nbytes:
            return None
        ws = self.by_device.get(str(device))
        if ws is None:
            ws = torch.empty(self.nbytes, dtype=torch.uint8, device=device)
            self.by_device[str(device)] = ws
        return ws


def current_stream_handle(device):
    """The cudaStream_t of PyTorch's current stream on ``device`` (what ucut_run is given)."""
    return torch.cuda.current_stream(device).cuda_stream


class Library:
    """A kernel library loaded with ctypes. ``describe`` is its ucut_describe() document,
    ``tensors`` its declared tensors (:func:`declared_tensors`), ``workspace_bytes`` what ucut_run
    needs. Libraries with torch stages need :meth:`set_stage_source` (or :meth:`set_host`)."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise LibraryError(path + ": no such kernel library")
        lib = ctypes.CDLL(os.path.abspath(path), mode=ctypes.RTLD_LOCAL)
        for sym in SYMBOLS:
            if not hasattr(lib, sym):
                raise LibraryError(f"{path}: missing symbol {sym} (not a ucutlass kernel library?)")
        lib.ucut_abi_version.restype = ctypes.c_int
        lib.ucut_describe.restype = ctypes.c_char_p
        lib.ucut_last_error.restype = ctypes.c_char_p
        lib.ucut_workspace_size.restype = ctypes.c_int
        lib.ucut_workspace_size.argtypes = [ctypes.POINTER(ctypes.c_size_t)]
        lib.ucut_run.restype = ctypes.c_int
        lib.ucut_run.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                 ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        if hasattr(lib, "ucut_run_timed"):  # optional (docs/kernel-abi.md, "Per-stage times")
            lib.ucut_run_timed.restype = ctypes.c_int
            lib.ucut_run_timed.argtypes = lib.ucut_run.argtypes + [ctypes.POINTER(ctypes.c_float), ctypes.c_int]
        self.lib = lib
        self.path = path
        abi = lib.ucut_abi_version()
        if abi != ABI_VERSION:
            raise LibraryError(f"{path}: kernel ABI {abi}, this runtime reads ABI {ABI_VERSION}")
        raw = lib.ucut_describe()
        self.describe = json.loads(raw.decode("utf-8") if raw else "")
        self.tensors = declared_tensors(self.describe)
        self.scalars = [float(s.get("default", 0.0)) for s in self.describe.get("scalars", [])]
        size = ctypes.c_size_t(0)
        rc = lib.ucut_workspace_size(ctypes.byref(size))
        if rc != 0:
            raise LibraryError(f"{path}: ucut_workspace_size failed ({rc}): {self.last_error()}", rc)
        self.workspace_bytes = int(size.value)
        self.callback = None
        self.stage_functions = {}
        self.current = None
        self.failed_stage = -1

    def last_error(self):
        raw = self.lib.ucut_last_error()
        return raw.decode("utf-8", "replace") if raw else ""

    def set_host(self, on_stage):
        """Registers ``on_stage(stage) -> int`` (0: success) as the library's torch stage host."""
        if not hasattr(self.lib, "ucut_set_host"):
            raise LibraryError(self.path + ": has torch stages but no ucut_set_host (an older library?)")
        self.callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int)(lambda _ctx, s: on_stage(s))
        self.lib.ucut_set_host.restype = None
        self.lib.ucut_set_host.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.lib.ucut_set_host(ctypes.cast(self.callback, ctypes.c_void_p), None)

    def set_stage_source(self, source):
        """Runs the torch stages with the functions of ``source`` (torch_stages.library_source: a
        module defining TORCH_STAGES) on the tensors of the call in flight."""
        if not source:
            return
        ns = {}
        exec(compile(source, "ucutlass_torch_stages", "exec"), ns)
        self.stage_functions = ns["TORCH_STAGES"]
        self.set_host(self.run_torch_stage)

    def run_torch_stage(self, stage):
        # failed_stage stays set if the stage raises (the callback returns into C): run reports it
        self.failed_stage = stage
        tensors, workspace = self.current
        spec = [s for s in self.describe.get("torch_stages", []) if int(s["stage"]) == stage][0]
        views = {}
        for name, loc in spec["tensors"].items():
            if "arg" in loc:
                views[name] = tensors[int(loc["arg"])]
                continue
            dt = DTYPES[loc["dtype"]]
            nbytes = math.prod(loc["shape"]) * torch.empty((), dtype=dt).element_size()
            views[name] = workspace[int(loc["offset"]):int(loc["offset"]) + nbytes].view(dt).view(loc["shape"])
        with torch.no_grad():
            self.stage_functions[stage](views)
        self.failed_stage = -1
        return 0

    def pointers(self, tensors, scalars):
        """ctypes arrays for ucut_run's tensor and scalar arguments."""
        ptrs = (ctypes.c_void_p * max(1, len(tensors)))(*[t.data_ptr() for t in tensors])
        sc = (ctypes.c_double * max(1, len(scalars)))(*scalars)
        return ptrs, (sc if scalars else None)

    def _call(self, fn, tensors, scalars, workspace, stream_handle, *extra):
        """``fn`` (ucut_run or ucut_run_timed) on the marshalled arguments, then ``extra``."""
        ptrs, sc = self.pointers(tensors, scalars)
        ws = workspace.data_ptr() if workspace is not None and workspace.numel() else None
        self.current = (tensors, workspace)  # for torch stages, called back from inside ucut_run
        rc = fn(ptrs, len(tensors), sc, len(scalars), ws, self.workspace_bytes, stream_handle, *extra)
        self.current = None  # the call's tensors are not kept alive past it (the evaluation's memory plan)
        return rc

    def run_raw(self, tensors, scalars, workspace, stream_handle):
        """One ucut_run; returns its code (0: ok). ``stream_handle``: a cudaStream_t or None."""
        return self._call(self.lib.ucut_run, tensors, scalars, workspace, stream_handle)

    @property
    def has_stage_times(self):
        """Whether the library has ucut_run_timed (docs/kernel-abi.md, "Per-stage times")."""
        return hasattr(self.lib, "ucut_run_timed")

    def run_timed_raw(self, tensors, scalars, workspace, stream_handle):
        """One ucut_run_timed: (its code, each stage's milliseconds). Synchronizes the stream."""
        stages = len(self.describe.get("stages", []))
        ms = (ctypes.c_float * max(1, stages))()
        rc = self._call(self.lib.ucut_run_timed, tensors, scalars, workspace, stream_handle, ms, max(1, stages))
        return rc, [float(v) for v in ms[:stages]]

    def run(self, tensors, workspace, scalars=None):
        """ucut_run on PyTorch's current stream of the tensors' device; raises on any failure."""
        if not tensors or not tensors[0].is_cuda:
            raise LibraryError("a ucutlass kernel library runs on CUDA tensors: move the model and inputs to a GPU", 1)
        scalars = self.scalars if scalars is None else [float(s) for s in scalars]
        rc = self.run_raw(tensors, scalars, workspace, current_stream_handle(tensors[0].device))
        if self.failed_stage >= 0:
            stage, self.failed_stage = self.failed_stage, -1
            raise LibraryError("torch stage %d failed (its traceback is above)" % stage, 4)
        if rc != 0:
            raise LibraryError("ucut_run returned %d (%s): %s" % (rc, ERROR_CODES.get(rc, "unknown error code"),
                                                                 self.last_error()), rc)


def call(lib, inputs, params, workspaces):
    """Binds ``inputs`` (in forward's order) and ``params`` (binding key -> tensor) to ``lib``
    (a :class:`Library`, or anything with ``tensors``, ``workspace_bytes`` and ``run``), runs it on
    the current stream and returns its outputs in their declared shapes, in output order."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    device = tensors[0].device if tensors else next(iter(params.values())).device
    binder = getattr(lib, "_ucut_binder", None)
    if binder is None or binder.source is not lib.tensors:
        binder = lib._ucut_binder = Binder(lib.tensors)
    args, outs = binder.bind(tensors, params, device)
    lib.run(args, workspaces.get(device))
    return outs
