"""A fast stand-in for the torch.export trace of extract.py: the same graph, without torch._dynamo.

Why: FakeTensorMode and torch.export.export import torch._dynamo (~2 s on a 2-core machine), which
dominated `python -m ucutlass_torch.extract one_problem.py`. trace() records the graph extract.py
reads from an ExportedProgram (the Program/Node classes below mimic the parts it reads), so
extract.py's node loop runs unchanged on either. extract.py falls back to torch.export whenever
trace() raises, and the tests check that both give byte-identical Problem IR.

How it reproduces torch.export.export(strict=False) (torch 2.11):
- the model and the inputs are built under `torch.device("meta")` instead of a FakeTensorMode:
  the same shapes and dtypes, no storage;
- forward runs under torch.no_grad() and the python dispatcher, with a TorchDispatchMode in the
  PreDispatch slot, where torch.export's pre-dispatch tracer sits: it sees the calls before
  autograd and CompositeImplicitAutograd decompose them (aten.linear, aten.layer_norm,
  aten.scaled_dot_product_attention, ...), with the same arguments;
- each call becomes a Node (OpOverload target; args/kwargs with tensors replaced by the Nodes that
  produced them; meta["val"]; meta["stack_trace"]: the innermost frame of a function named
  `forward` in the problem file, as torch.export records "forward" frames only); calls returning a
  list or tuple get operator.getitem Nodes; nothing is dead-code eliminated (neither does
  torch.export, apart from unused detach, which extract.py ignores anyway);
- placeholders follow torch.export's order: parameters, then buffers (named_parameters and
  named_buffers of the wrapper module, remove_duplicate=False, names prefixed "model."), then the
  tensor inputs; every output is a USER_OUTPUT;
- torch's Python meta kernels are wrapped by torch._compile._disable_dynamo, which imports
  torch._dynamo on first call. While tracing, each wrapper gets its own function as the cached
  "disabled" callable (what torch._dynamo.disable amounts to when nothing is being compiled); the
  attribute is removed again afterwards.

What it refuses (Unsupported; extract.py then uses torch.export): tensors other than the inputs,
parameters, buffers and op results (module tensor attributes, torch.tensor(...) in forward), real
(non-meta) tensors, tied parameters, tensor subclasses, data-dependent operators and non-tensor
results (.item(), bool(tensor)), grad-mode / autocast / vmap switches inside forward, code that
looks at a tensor's device (torch.export sees a "cpu" fake tensor where this sees "meta", and
device-dependent Python code, e.g. nn.MultiheadAttention's fast path, could branch differently;
device moves themselves, `.cuda()` or `.to(device)`, stay on meta: placement.py), forward
assigning module attributes, operators extract.py would record as
`opaque` (their FLOPs are counted on fake tensors), and any exception.

It relies on torch internals (the PreDispatch mode slot, ProxyTorchDispatchMode and
PreDispatchTorchFunctionMode as base classes, torch._compile._disable_dynamo's closure): the
project pins torch==2.11.0. If they change, trace() most likely raises and extraction falls back to
torch.export, only slower; tests/test_extract_fast.py compares both paths to catch the rest.
"""

from __future__ import annotations

import contextlib
import gc
import operator
import os
import sys
import types
import weakref
from typing import Any, Dict, List, Optional


class Unsupported(Exception):
    """The fast tracer cannot guarantee torch.export's graph for this problem."""


class Node:
    """The part of torch.fx.Node that extract.py reads."""

    __slots__ = ("op", "name", "target", "args", "kwargs", "meta")

    def __init__(self, op: str, name: str, target: Any = None, args: tuple = (), kwargs: Optional[dict] = None,
                 meta: Optional[dict] = None):
        self.op = op
        self.name = name
        self.target = target
        self.args = args
        self.kwargs = kwargs or {}
        self.meta = meta or {}

    def __repr__(self) -> str:
        return f"Node({self.op}, {self.name}, {self.target})"


class _Arg:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class _Spec:
    __slots__ = ("kind", "arg", "target", "persistent")

    def __init__(self, kind, name: str, target: Optional[str] = None, persistent: Optional[bool] = None):
        self.kind = kind
        self.arg = _Arg(name)
        self.target = target
        self.persistent = persistent


class _Graph:
    def __init__(self):
        self.nodes: List[Node] = []


class _Signature:
    def __init__(self):
        self.input_specs: List[_Spec] = []
        self.output_specs: List[_Spec] = []


class Program:
    """The part of torch.export.ExportedProgram that extract.py reads."""

    def __init__(self):
        self.graph = _Graph()
        self.graph_signature = _Signature()
        self.constants: Dict[str, Any] = {}


# ------------------------------------------------------------------------------ _disable_dynamo

_DISABLE_CODE = None


def _disable_dynamo_code():
    global _DISABLE_CODE
    if _DISABLE_CODE is None:
        import torch

        _DISABLE_CODE = torch._compile._disable_dynamo(lambda: None).__code__
    return _DISABLE_CODE


@contextlib.contextmanager
def _dynamo_wrappers_inline():
    """Lets torch._compile._disable_dynamo wrappers call their function directly while tracing
    (see the module docstring), and puts them back as they were afterwards. A wrapper created
    after the scan still works: it imports torch._dynamo, which is only slower."""
    if "torch._dynamo" in sys.modules:
        yield
        return
    code = _disable_dynamo_code()
    fn_type = types.FunctionType
    patched = []
    for o in gc.get_referrers(code):  # the wrapper functions: each refers to this code object
        if type(o) is fn_type and o.__code__ is code and o.__closure__:
            try:
                fn = o.__closure__[o.__code__.co_freevars.index("fn")].cell_contents
            except (ValueError, IndexError):
                continue
            if getattr(fn, "__dynamo_disable", None) is None:
                try:
                    setattr(fn, "__dynamo_disable", fn)
                except (AttributeError, TypeError):
                    continue
                patched.append(fn)
    try:
        yield
    finally:
        for fn in patched:
            if getattr(fn, "__dynamo_disable", None) is fn:
                try:
                    delattr(fn, "__dynamo_disable")
                except AttributeError:
                    pass


# ------------------------------------------------------------------------------------ tracing

_DEVICE_PROPS = {"device", "is_cuda", "is_cpu", "is_meta", "is_xpu", "is_mps", "is_xla", "is_hpu", "is_mtia",
                 "is_ipu", "is_vulkan", "is_maia"}
_DEVICE_METHODS = {"get_device", "numpy", "tolist", "item", "data_ptr", "untyped_storage",
                   "storage", "__array__", "__dlpack__", "__dlpack_device__"}


_MODES = None


def _modes():
    """The mode classes, built on first use (after torch is imported)."""
    global _MODES
    if _MODES is not None:
        return _MODES
    import torch
    from torch.fx.experimental.proxy_tensor import PreDispatchTorchFunctionMode, ProxyTorchDispatchMode
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    from .placement import redirect

    meta = torch.device("meta")

    class Guard(PreDispatchTorchFunctionMode):
        """Rejects what the meta device would answer differently from torch.export's fake CPU
        tensors, and the calls torch.export's own PreDispatchTorchFunctionMode records (grad mode,
        autocast, vmap: they become sub-graphs there). It is a PreDispatchTorchFunctionMode only
        because torch.autocast reports its enter/exit to modes of that type."""

        def __init__(self, tracer: "_Tracer"):
            TorchFunctionMode.__init__(self)
            self.rec = tracer

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            func, args, kwargs = redirect(func, tuple(args), dict(kwargs or {}), meta)
            name = getattr(func, "__name__", "")
            if name in _RECORDED_BY_EXPORT:
                # No exception here: autocast's __enter__ has already switched autocast on when it
                # reports to this mode, and must get to its __exit__. Mark the trace void instead.
                self.rec.void(f"forward calls {name}")
                if name in ("_enter_autocast", "_exit_autocast"):
                    return None  # autocast's __enter__/__exit__ did the work; this is only a report
                return func(*args, **kwargs)
            why = _device_probe(name, func, args, kwargs)
            if why is not None:
                self.rec.fail(Unsupported("forward " + why))
            return func(*args, **kwargs)

    class BuildGuard(TorchFunctionMode):
        """While Model(*get_init_inputs()) and get_inputs() run: keeps every tensor on the meta
        device (placement.redirect, as the torch.export path keeps them on the CPU) and rejects
        device probes, as Guard does."""

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            func, args, kwargs = redirect(func, tuple(args), dict(kwargs or {}), meta)
            name = getattr(func, "__name__", "")
            why = _device_probe(name, func, args, kwargs)
            if why is not None:
                raise Unsupported("building the model or the inputs " + why)
            return func(*args, **kwargs)

    class Recorder(ProxyTorchDispatchMode):
        """A mode at the PreDispatch key. That slot only takes a ProxyTorchDispatchMode (or a
        FunctionalTensorMode), so this subclasses it, without its tracer machinery."""

        def __init__(self, tracer: "_Tracer"):
            TorchDispatchMode.__init__(self, torch._C.DispatchKey.PreDispatch)
            self._mode_key = torch._C._TorchDispatchModeKey.PROXY
            self.rec = tracer

        def __enter__(self):
            return TorchDispatchMode.__enter__(self)

        def __exit__(self, exc_type, exc_val, exc_tb):
            return TorchDispatchMode.__exit__(self, exc_type, exc_val, exc_tb)

        def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
            return self.rec.call(func, args, kwargs or {})

    _MODES = (Guard, Recorder, BuildGuard)
    return _MODES


def _device_probe(name: str, func, args, kwargs) -> Optional[str]:
    """Why a torch function call (after placement.redirect) would see the meta device where
    torch.export sees "cpu", or None."""
    if name == "__get__":
        prop = getattr(getattr(func, "__self__", None), "__name__", "")
        return f"reads Tensor.{prop}" if prop in _DEVICE_PROPS else None
    if name in _DEVICE_METHODS:
        return f"calls Tensor.{name}"
    return None


# torch.export's PreDispatchTorchFunctionMode puts these in the graph (extract.py then rejects the
# sub-graphs torch.export builds from them).
_RECORDED_BY_EXPORT = {"_set_grad_enabled", "_enter_autocast", "_exit_autocast", "_add_batch_dim",
                       "_remove_batch_dim", "_vmap_increment_nesting", "_vmap_decrement_nesting",
                       "lazy_load_decompositions"}


class _Tracer:
    """Records pre-dispatch calls as Nodes. Tensors map to the Node that produced them through weak
    references only: a factory's result (torch.zeros, ...) keeps its Python identity on the way back
    to the caller only if nothing else holds it (autograd's make_variable copies a shared tensor),
    so node values are recorded as (shape, dtype) and made into meta tensors after the trace."""

    def __init__(self, problem_path: str):
        import torch

        self.torch = torch
        self.program = Program()
        self.nodes = self.program.graph.nodes
        self.refs: Dict[int, tuple] = {}      # id(tensor) -> (weakref to it, Node)
        self.counter = 0
        self.path = problem_path
        self.real = os.path.realpath(problem_path)
        self.match: Dict[str, bool] = {}
        self.error: Optional[BaseException] = None

    def void(self, why: str) -> None:
        if self.error is None:
            self.error = Unsupported(why)

    def fail(self, e: BaseException):
        if self.error is None:
            self.error = e  # forward might catch it; the trace is void either way
        raise e

    def _name(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    def bind(self, t, node: Node) -> None:
        self.refs[id(t)] = (weakref.ref(t), node)

    def lookup(self, t) -> Optional[Node]:
        e = self.refs.get(id(t))
        if e is not None and e[0]() is t:
            return e[1]
        return None

    def placeholder(self, t, spec_kind, target=None, persistent=None) -> Node:
        n = Node("placeholder", self._name("ph"), meta={"val": t})
        self.nodes.append(n)
        self.bind(t, n)
        self.program.graph_signature.input_specs.append(_Spec(spec_kind, n.name, target, persistent))
        return n

    def _is_problem_file(self, fname: str) -> bool:
        m = self.match.get(fname)
        if m is None:
            m = fname == self.path or os.path.realpath(fname) == self.real
            self.match[fname] = m
        return m

    def _stack_trace(self) -> str:
        """torch.export keeps the frames of functions named `forward` (its tracer records "forward
        stack traces only"); extract._line_of takes the innermost one in the problem file."""
        f = sys._getframe(2)
        while f is not None:
            code = f.f_code
            if code.co_name == "forward" and self._is_problem_file(code.co_filename):
                return f'File "{code.co_filename}", line {f.f_lineno}, in forward'
            f = f.f_back
        return ""

    def _arg(self, v):
        torch = self.torch
        if isinstance(v, torch.Tensor):
            n = self.lookup(v)
            if n is None:
                raise Unsupported("a tensor constant (not an input, parameter, buffer or op result)")
            return n
        if isinstance(v, (list, tuple)):
            return type(v)(self._arg(x) for x in v)
        if isinstance(v, dict):
            raise Unsupported("dict argument")
        if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise Unsupported("symbolic value")
        return v

    def call(self, func, args, kwargs):
        torch = self.torch
        try:
            if not isinstance(func, torch._ops.OpOverload) or func is torch.ops.prim.device.default:
                raise Unsupported(f"unexpected operator {func}")
            tags = func.tags
            if torch.Tag.dynamic_output_shape in tags or torch.Tag.data_dependent_output in tags:
                raise Unsupported(f"{func} depends on tensor values")
            rets = [str(r.type) for r in func._schema.returns]
            if not rets or any(r not in ("Tensor", "List[Tensor]", "Tensor[]") for r in rets):
                raise Unsupported(f"{func} returns {', '.join(rets) or 'nothing'}")  # item, is_nonzero, ...
            if torch.is_grad_enabled() or torch.is_inference_mode_enabled() or torch._C._is_any_autocast_enabled():
                raise Unsupported("grad mode, inference mode or autocast changed inside forward")
            nargs = tuple(self._arg(a) for a in args)
            nkwargs = {k: self._arg(v) for k, v in kwargs.items()}
            out = func(*args, **kwargs)
            node = Node("call_function", self._name(func.overloadpacket.__name__), func, nargs, nkwargs,
                        {"stack_trace": self._stack_trace()})
            self.nodes.append(node)
            if isinstance(out, torch.Tensor):
                node.meta["val"] = self._facts(out)
                self.bind(out, node)
            elif isinstance(out, (list, tuple)) and out and all(isinstance(o, torch.Tensor) for o in out):
                node.meta["val"] = type(out)(self._facts(o) for o in out)
                for i, o in enumerate(out):
                    g = Node("call_function", self._name("getitem"), operator.getitem, (node, i), {},
                             {"val": node.meta["val"][i]})
                    self.nodes.append(g)
                    self.bind(o, g)
            else:
                raise Unsupported(f"{func} returns {type(out).__name__}")
            return out
        except BaseException as e:
            self.fail(e)

    def _facts(self, t) -> "_Facts":
        if type(t) is not self.torch.Tensor or t.device.type != "meta":
            raise Unsupported(f"unexpected tensor {type(t).__name__} on {t.device}")
        return _Facts(tuple(t.shape), t.dtype)

    def materialise(self) -> None:
        """Node values (shape, dtype) -> meta tensors, as extract.py expects torch.Tensor values."""
        torch = self.torch
        made: Dict[int, Any] = {}

        def make(v):
            if isinstance(v, _Facts):
                if id(v) not in made:
                    made[id(v)] = torch.empty(v.shape, dtype=v.dtype, device="meta")
                return made[id(v)]
            if isinstance(v, (list, tuple)):
                return type(v)(make(x) for x in v)
            return v

        for n in self.nodes:
            if "val" in n.meta:
                n.meta["val"] = make(n.meta["val"])


class _Facts:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = shape
        self.dtype = dtype


def _module_state(model) -> list:
    """Every module's attributes, parameters, buffers and submodules, by identity."""
    state = []
    for m in model.modules():
        d = vars(m)
        for dct in (d, d.get("_parameters", {}), d.get("_buffers", {}), d.get("_modules", {})):
            state.append((m, dct, list(dct.items())))
    return state


def _same_state(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for (m1, _, items1), (m2, _, items2) in zip(a, b):
        if m1 is not m2 or len(items1) != len(items2):
            return False
        for (k1, v1), (k2, v2) in zip(items1, items2):
            if k1 != k2 or v1 is not v2:
                return False
    return True


def trace(lp, seed: int):
    """Builds the model and inputs on the meta device and records forward. Returns
    (program, inputs, input_names, tensor_pos, None) like extract._trace; raises Unsupported (or
    anything else) when extract.py must use torch.export instead."""
    import torch
    from torch._dispatch.python import enable_python_dispatcher
    from torch.export.graph_signature import InputKind, OutputKind
    from torch.utils import _pytree as pytree

    from .extract import _check_and_bind, _quiet_stderr
    from .loader import call_user

    Guard, Recorder, BuildGuard = _modes()
    with _dynamo_wrappers_inline():
        torch.manual_seed(seed)
        with torch.device("meta"), BuildGuard():
            model = lp.Model(*lp.init_inputs)
            torch.manual_seed(seed)
            inputs = call_user(lp, "get_inputs", lp.get_inputs)
        bound, names, tensor_pos = _check_and_bind(lp, model, inputs)

        tr = _Tracer(lp.path)
        params = list(bound.named_parameters(remove_duplicate=False))
        buffers = list(bound.named_buffers(remove_duplicate=False))
        seen = set()
        for _, t in params + buffers:
            if id(t) in seen:
                raise Unsupported("a tensor registered twice (tied parameters)")
            seen.add(id(t))
        for k, t in params:
            if type(t) is not torch.nn.Parameter or t.device.type != "meta":
                raise Unsupported(f"parameter {k} is a {type(t).__name__} on {t.device}")
            tr.placeholder(t, InputKind.PARAMETER, k)
        for k, t in buffers:
            if type(t) is not torch.Tensor or t.device.type != "meta":
                raise Unsupported(f"buffer {k} is a {type(t).__name__} on {t.device}")
            owner_name, _, leaf = k.rpartition(".")
            owner = bound.get_submodule(owner_name)
            tr.placeholder(t, InputKind.BUFFER, k, leaf not in owner._non_persistent_buffers_set)
        for i in tensor_pos:
            t = inputs[i]
            if type(t) is not torch.Tensor or t.device.type != "meta":
                raise Unsupported(f"input {i} is a {type(t).__name__} on {t.device}")
            if tr.lookup(t) is not None:
                raise Unsupported("an input is also a parameter/buffer or another input")
            tr.placeholder(t, InputKind.USER_INPUT)

        before = _module_state(bound)
        tensor_args = tuple(inputs[i] for i in tensor_pos)
        with (torch.no_grad(), _quiet_stderr(), torch.device("meta"), Guard(tr), enable_python_dispatcher(),
              Recorder(tr)):
            out = bound(*tensor_args)
        tr.materialise()
        if tr.error is not None:
            raise Unsupported(f"trace void: {tr.error}")
        if not _same_state(before, _module_state(bound)):
            raise Unsupported("forward assigns module attributes")

    flat, _ = pytree.tree_flatten(out)
    out_nodes = []
    for v in flat:
        if not isinstance(v, torch.Tensor):
            raise Unsupported(f"forward returns a {type(v).__name__}")
        n = tr.lookup(v)
        if n is None:
            raise Unsupported("forward returns a tensor constant")
        out_nodes.append(n)
        tr.program.graph_signature.output_specs.append(_Spec(OutputKind.USER_OUTPUT, n.name))
    tr.nodes.append(Node("output", "output", "output", (tuple(out_nodes),)))
    return tr.program, inputs, names, tensor_pos, None
