"""torch.einsum in the Problem IR (ucutlass_torch/einsum.py): each equation extracts to IR ops that,
run with real tensors, give torch.einsum's result; GEMM-shaped einsums become one matmul with no
copy the GEMM cannot read; what the IR cannot write stays opaque with the equation and why; both
tracers agree."""

import json
import sys
import textwrap
from pathlib import Path

import pytest
import torch

PYDIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYDIR))

from ucutlass_torch.extract import extract  # noqa: E402
from ucutlass_torch.schema import validate  # noqa: E402


def problem(tmp_path, eq, shapes, name="ein"):
    p = tmp_path / f"{name}.py"
    args = ", ".join(f"x{i}" for i in range(len(shapes)))
    p.write_text(textwrap.dedent(f'''\
        import torch
        import torch.nn as nn


        class Model(nn.Module):
            def forward(self, {args}):
                return torch.einsum({eq!r}, {args})


        def get_inputs():
            return [{", ".join(f"torch.randn({list(s)})" for s in shapes)}]


        def get_init_inputs():
            return []
        '''))
    return p


def run_ir(doc, inputs):
    """Runs the IR ops an einsum expands to with real tensors."""
    env = dict(zip(doc["inputs"], inputs))
    for op in doc["ops"]:
        x = [env[n] for n in op["inputs"]]
        a = op["attrs"]
        if op["op"] == "sum":
            y = x[0].sum(dim=a["dims"], keepdim=a["keepdim"]) if a["dims"] is not None else x[0].sum()
        elif op["op"] == "permute":
            y = x[0].permute(a["dims"])
        elif op["op"] == "reshape":
            y = x[0].reshape(a["shape"])
        elif op["op"] == "matmul":
            y = torch.matmul(x[0], x[1])
        elif op["op"] == "mul":
            y = x[0] * x[1]
        elif op["op"] == "clone":
            y = x[0].clone()
        else:
            raise AssertionError(f"unexpected op {op['op']}")
        env[op["outputs"][0]] = y
    return [env[n] for n in doc["outputs"]]


CASES = {
    # equation: (operand shapes, the IR ops)
    "bijl,lk->bijk": ([(2, 3, 4, 5), (5, 6)], ["matmul"]),          # KernelBench's 4-D tensor-matrix product
    "bik,bkj->bij": ([(2, 3, 4), (2, 4, 5)], ["matmul"]),
    "bik,bjk->bij": ([(2, 3, 4), (2, 5, 4)], ["permute", "matmul"]),  # B read transposed
    "ij,jk->ik": ([(3, 4), (4, 5)], ["matmul"]),
    "ij,jk->ki": ([(3, 4), (4, 5)], ["permute", "permute", "matmul"]),  # C^T = B^T A^T
    "ji,jk->ik": ([(4, 3), (4, 5)], ["permute", "matmul"]),
    "bhik,bhkj->bhij": ([(2, 3, 4, 5), (2, 3, 5, 6)], ["matmul"]),
    "ij,j->i": ([(3, 4), (4,)], ["reshape", "matmul", "reshape"]),   # GEMV: N = 1
    "ijk,jkl->il": ([(2, 3, 4), (3, 4, 5)], ["reshape", "reshape", "matmul"]),
    "ij->i": ([(3, 4)], ["sum"]),
    "bij->bj": ([(2, 3, 4)], ["sum"]),
    "ij->ji": ([(3, 4)], ["permute"]),
    "ij->": ([(3, 4)], ["sum"]),
    "ij->ij": ([(3, 4)], ["clone"]),
    "ij,ij->ij": ([(3, 4), (3, 4)], ["mul"]),
    "ij,ij->i": ([(3, 4), (3, 4)], ["mul", "sum"]),                  # row-wise dot products
    "i,j->ij": ([(3,), (4,)], ["reshape", "mul"]),                   # outer product
    "ij,jk": ([(3, 4), (4, 5)], ["matmul"]),                         # implicit output 'ik'
    "bij,bjk": ([(2, 3, 4), (2, 4, 5)], ["permute", "reshape", "reshape", "matmul"]),  # implicit: 'ik', b summed
    "...ij,...jk->...ik": ([(2, 3, 4), (2, 4, 5)], ["matmul"]),
    "bi,bij->bj": ([(2, 3), (2, 3, 4)], ["reshape", "matmul", "reshape"]),
    "ijk,k->ij": ([(2, 3, 4), (4,)], ["reshape", "matmul", "reshape"]),
    # three or more operands: pairs from the left, as torch.einsum without opt_einsum
    "il,lk,kj->ij": ([(2, 3), (3, 4), (4, 5)], ["matmul", "matmul"]),
    "il,lk,ab->ik": ([(2, 3), (3, 4), (2, 2)], ["matmul", "sum", "mul"]),
    # Mamba2's chunk states and its diagonal blocks (KernelBench level 3), at test size
    "bclhn,bhcl,bclhp->bchpn": ([(2, 3, 4, 2, 5), (2, 2, 3, 4), (2, 3, 4, 2, 6)],
                                ["permute", "reshape", "mul", "permute", "permute", "matmul"]),
    "bclhn,bcshn,bhcls,bcshp->bclhp": ([(2, 3, 4, 2, 5), (2, 3, 4, 2, 5), (2, 2, 3, 4, 4), (2, 3, 4, 2, 6)],
                                       ["permute", "permute", "matmul", "permute", "permute", "mul", "permute",
                                        "permute", "matmul", "permute"]),
}


@pytest.mark.parametrize("eq", [e for e, c in CASES.items() if c is not None])
def test_einsum_ir_computes_einsum(tmp_path, eq):
    shapes, want_ops = CASES[eq]
    doc = extract(problem(tmp_path, eq, shapes))
    assert validate(doc) == []
    assert [op["op"] for op in doc["ops"]] == want_ops
    assert all(op["from"] == f"einsum('{eq}')" and op["line"] == 7 for op in doc["ops"])
    torch.manual_seed(0)
    xs = [torch.randn(s, dtype=torch.float64) for s in shapes]
    (got,) = run_ir(doc, xs)
    torch.testing.assert_close(got, torch.einsum(eq, *xs))


def test_kernelbench_4d_tensor_matrix_product_flops(tmp_path):
    # KernelBench level 1's 'bijl,lk->bijk' at its size: one matmul of 2·b·i·j·l·k FLOPs
    doc = extract(problem(tmp_path, "bijl,lk->bijk", [(8, 256, 512, 256), (256, 768)]))
    (op,) = doc["ops"]
    assert (op["op"], op["inputs"], op["flop_class"]) == ("matmul", ["x0", "x1"], "tensor")
    assert op["flops"] == 2 * 8 * 256 * 512 * 256 * 768


@pytest.mark.parametrize("eq,shapes,why", [
    ("ii->i", [(3, 3)], "repeats index 'i' in operand 0 (a diagonal or trace)"),
    ("ij,ij->ij", [(3, 4), (1, 4)], "index 'i' has sizes 3 and 1 (einsum broadcasting)"),
])
def test_einsum_outside_the_ir_stays_opaque_with_why(tmp_path, eq, shapes, why):
    doc = extract(problem(tmp_path, eq, shapes))
    (op,) = doc["ops"]
    assert op["op"] == "opaque"
    assert {k: op["attrs"][k] for k in ("target", "equation", "why")} == {
        "target": "aten::einsum.default", "equation": eq, "why": why}
    assert "from" not in op


def test_fast_and_export_tracers_agree(tmp_path):
    p = problem(tmp_path, "bik,bjk->bij", [(2, 3, 4), (2, 5, 4)])
    text = lambda d: json.dumps(d, indent=1, allow_nan=False)  # noqa: E731
    assert text(extract(p, tracer="fast")) == text(extract(p, tracer="export"))
