"""Custom ops over kernel libraries (library_op.py) on the CPU: a stubbed library (a describe
document and a Python stand-in for ucut_run) registers as torch.ops.ucutlass.<name>, its fake
implementation comes from the describe document, and graphs calling it trace under
torch.compile(fullgraph=True) and torch.export."""

import os
import sys

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import library_op, runtime  # noqa: E402

# y = gelu(x @ W.T + b), declared with the input flattened (the binding rules allow it).
DESC = {"abi": 1, "name": "linear-gelu", "program_hash": "ab12cd34ef56" + "0" * 52, "tensors": [
    {"name": "x", "role": "in", "dtype": "f32", "shape": [8, 16], "index": 0},
    {"name": "W", "role": "param", "dtype": "f32", "shape": [32, 16], "binding": "fc.weight"},
    {"name": "b", "role": "param", "dtype": "f32", "shape": [32], "binding": "fc.bias"},
    {"name": "y", "role": "out", "dtype": "f32", "shape": [8, 32], "index": 0}]}
CALLS = []


def launch(args):
    x, w, b, y = args
    CALLS.append([tuple(a.shape) for a in args])
    y.copy_(torch.nn.functional.gelu(x @ w.T + b))


class Block(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.op = op

    def forward(self, x):
        h = x.view(8, 16) * 2.0
        (y,) = self.op([h], {"fc.weight": self.fc.weight, "fc.bias": self.fc.bias})
        return torch.sort(y, dim=-1).values.view(2, 4, 32)  # sort: not a library op


def reference(m, x):
    return torch.sort(torch.nn.functional.gelu(m.fc(x.view(8, 16) * 2.0)), dim=-1).values.view(2, 4, 32)


@pytest.fixture()
def op():
    return library_op.register(library_op.StandIn(DESC, launch))


def test_the_op_is_named_after_the_program_and_its_hash(op):
    assert op.qualname == "ucutlass::linear_gelu_ab12cd34ef56"
    assert library_op.register(library_op.StandIn(DESC, launch)).op is op.op  # defined once per process
    assert library_op.op_name({"name": "9x", "tensors": []}) == "k_9x"


def test_eager_call_runs_the_stand_in(op):
    torch.manual_seed(0)
    m = Block(op).eval()
    x = torch.randn(2, 4, 16)
    CALLS.clear()
    with torch.no_grad():
        got = m(x)
    assert CALLS == [[(8, 16), (32, 16), (32,), (8, 32)]]
    assert torch.allclose(got, reference(m, x))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_fullgraph_compile_traces_through_the_fake(op, backend):
    torch.manual_seed(0)
    m = Block(op).eval()
    x = torch.randn(2, 4, 16)
    torch._dynamo.reset()
    compiled = torch.compile(m, backend=backend, fullgraph=True)
    with torch.no_grad():
        got = compiled(x)
    assert torch.allclose(got, reference(m, x))


def test_torch_export_keeps_the_op_in_the_graph(op):
    torch.manual_seed(0)
    m = Block(op).eval()
    x = torch.randn(2, 4, 16)
    ep = torch.export.export(m, (x,))
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert any(t.startswith("ucutlass.linear_gelu_ab12cd34ef56") for t in targets), targets
    assert torch.allclose(ep.module()(x), reference(m, x))


def test_the_fake_checks_the_declared_shapes(op):
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(8, 16)
        (y,) = op([x], {"fc.weight": torch.empty(32, 16), "fc.bias": torch.empty(32)})
        assert y.shape == (8, 32) and y.dtype == torch.float32
        with pytest.raises(runtime.BindError, match="expects shape"):
            op([torch.empty(8, 15)], {"fc.weight": torch.empty(32, 16), "fc.bias": torch.empty(32)})


def test_kernel_call_module_holds_the_params_and_reference_shapes(op):
    torch.manual_seed(0)
    fc = nn.Linear(16, 32)
    call = library_op.KernelCall(op, {"fc.weight": fc.weight, "fc.bias": fc.bias}, shapes=[[2, 4, 32]])
    x = torch.randn(2, 4, 16)
    with torch.no_grad():
        got = torch.compile(call, backend="eager", fullgraph=True)(x)
        want = torch.nn.functional.gelu(fc(x))
    assert got.shape == (2, 4, 32) and torch.allclose(got, want)
    assert sorted(call.state_dict()) == ["p0", "p1"]


def test_a_real_library_refuses_cpu_tensors():
    lib = library_op.StandIn(DESC, launch)
    lib.run = runtime.Library.run.__get__(lib)  # the runtime's own check, before any ctypes call
    with pytest.raises(runtime.LibraryError, match="GPU"):
        lib.run([torch.zeros(1)], None)
