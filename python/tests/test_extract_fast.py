"""The fast tracer (ucutlass_torch.fasttrace) against torch.export: byte-identical Problem IR for
representative suite problems and small edge cases, automatic fallback for what it refuses, no
torch._dynamo import, and no global state left behind."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYDIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYDIR))

from ucutlass_torch.extract import extract  # noqa: E402
from ucutlass_torch.fasttrace import Unsupported  # noqa: E402
from ucutlass_torch.loader import ProblemError  # noqa: E402

SUITE = PYDIR.parent / "problems"

REPRESENTATIVE = [
    "epi_linear_bias_gelu",         # GEMM + bias + epilogue
    "epi_swiglu",                   # two GEMMs, silu, mul
    "gemm_tt_4096x4096x8192",       # explicit transposes
    "gemm_bmm_128x512x1024x2048",   # bmm
    "red_softmax_rows",             # softmax
    "red_max_cols",                 # multi-output (values, indices), i64
    "norm_layernorm",               # layer norm with parameters
    "norm_batchnorm2d",             # buffers (running stats)
    "loss_cross_entropy",           # loss with an integer target
    "loss_mse",                     # broadcast_tensors inside mse_loss
    "scan_cumsum_reverse",          # flip-cumsum-flip peephole
    "scan_cumsum_exclusive",        # cumsum - x peephole
    "attn_sdpa_causal_bf16",        # scaled_dot_product_attention, bf16
]


def text(doc):
    return json.dumps(doc, indent=1) + "\n"  # what write_json writes


@pytest.mark.parametrize("name", REPRESENTATIVE)
def test_fast_equals_export_on_suite(name):
    p = SUITE / f"{name}.py"
    assert text(extract(p, tracer="fast")) == text(extract(p, tracer="export"))


def write(tmp_path, name, body, tail=""):
    p = tmp_path / name
    p.write_text("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n" + textwrap.dedent(body)
                 + tail)
    return p


# Small problems the fast tracer handles: each must give exactly torch.export's IR.
HANDLED = {
    "buffers_and_extras": '''
        class Sub(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("np", torch.ones(8), persistent=False)
                self.lin = nn.Linear(8, 8)

            def forward(self, x):
                return self.lin(x) * self.np


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("x", torch.full((8,), 2.0))   # clashes with the input's name
                self.subs = nn.ModuleList([Sub(), Sub()])
                self.p = nn.Parameter(torch.randn(8))
                self.unused = nn.Linear(3, 3)

            def forward(self, x, k, flag):
                for s in self.subs:
                    x = s(x)
                return x * self.x + self.p + k, x, self.p


        def get_inputs():
            return [torch.randn(4, 8), 3, True]


        def get_init_inputs():
            return []
        ''',
    "lines_views_inplace_factories": '''
        def helper(a, b):
            return torch.matmul(
                a, b)


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.l = nn.Linear(8, 8)
                self.l.register_forward_hook(lambda m, i, o: o * 2)

            def forward(self, a, b, m):
                y = helper(
                    a, b)
                z = self.l(y.t().contiguous().t())
                z.relu_()
                w = torch.where(m, z, 0.0) + torch.zeros(8) + torch.ones_like(z)
                u, v = w.split([3, 5], dim=1)
                return {"u": u.softmax(-1), "v": (v.cumsum(1), v.to(torch.bfloat16))}


        def get_inputs():
            return [torch.randn(4, 6), torch.randn(6, 8), torch.rand(4, 8) > 0.5]


        def get_init_inputs():
            return []
        ''',
    "conversions_and_device_moves": '''
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(8, 16).half()
                self.b = nn.Linear(16, 16).to(torch.bfloat16).cuda()
                self.c = nn.Linear(16, 4).to("cuda", torch.float16)

            def forward(self, x):
                h = self.a(x.cuda().half())
                h = self.b(h.to(torch.bfloat16))
                return self.c(h.to(self.c.weight.dtype)).float()


        def get_inputs():
            return [torch.randn(4, 8, device="cuda")]


        def get_init_inputs():
            return []
        ''',
}


@pytest.mark.parametrize("name", sorted(HANDLED))
def test_fast_equals_export_on_edge_cases(tmp_path, name):
    p = write(tmp_path, f"{name}.py", HANDLED[name])
    assert text(extract(p, tracer="fast")) == text(extract(p, tracer="export"))


TAIL = '''

def get_inputs():
    return [torch.randn(4, 8)]


def get_init_inputs():
    return []
'''

# Problems the fast tracer refuses (why, forward body): "auto" must still give torch.export's result.
REFUSED = {
    "device_probe": ("reads Tensor.device", "return x + torch.zeros(8, device=x.device)"),
    "tensor_constant": ("tensor constant", "return x * torch.tensor([2.0])"),
    "opaque_op": ("would be opaque", "return torch.einsum('ij,ij->ij', x, x[:1])"),
    "grad_mode": ("grad", "with torch.enable_grad():\n            y = x * 2\n        return y"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_problems_fall_back(tmp_path, name):
    why, body = REFUSED[name]
    p = write(tmp_path, f"{name}.py", f"class Model(nn.Module):\n    def forward(self, x):\n        {body}\n", TAIL)
    with pytest.raises(Unsupported, match=why):
        extract(p, tracer="fast")
    try:
        expected = text(extract(p, tracer="export"))
    except ProblemError as e:
        with pytest.raises(ProblemError) as got:
            extract(p, tracer="auto")
        assert str(got.value) == str(e)
    else:
        assert text(extract(p, tracer="auto")) == expected


def test_autocast_in_forward_leaves_no_state(tmp_path):
    import torch

    p = write(tmp_path, "amp.py", '''
        class Model(nn.Module):
            def forward(self, x):
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    return x @ x.t()
        ''', TAIL)
    grad = torch.is_grad_enabled()
    with pytest.raises(ProblemError, match="sub-graph"):
        extract(p)  # the fast tracer refuses; torch.export's graph has a sub-graph extract rejects
    assert not torch.is_autocast_enabled("cpu")
    assert torch.is_grad_enabled() == grad


def test_bad_tracer_name():
    with pytest.raises(ValueError, match="UCUTLASS_EXTRACT_TRACER"):
        extract(SUITE / "act_relu.py", tracer="quick")


def test_fast_path_does_not_import_dynamo():
    # A fresh process: the point of the fast tracer is to never import torch._dynamo.
    code = textwrap.dedent('''
        import sys, time, types, gc
        t0 = time.time()
        import torch
        t1 = time.time()
        from ucutlass_torch.extract import extract
        doc = extract(sys.argv[1], tracer="fast")
        t2 = time.time()
        assert doc["ops"][0]["op"] == "linear", doc["ops"]
        assert "torch._dynamo" not in sys.modules, "the fast tracer imported torch._dynamo"
        code = torch._compile._disable_dynamo(lambda: None).__code__
        left = [f for f in gc.get_referrers(code) if type(f) is types.FunctionType and f.__code__ is code
                and getattr(f.__closure__[f.__code__.co_freevars.index("fn")].cell_contents,
                            "__dynamo_disable", None) is not None]
        assert not left, "_disable_dynamo wrappers were not restored"
        print(f"import torch {t1 - t0:.2f} s, extract (fast) {t2 - t1:.2f} s")
        ''')
    env = dict(os.environ, PYTHONPATH=str(PYDIR))
    env.pop("UCUTLASS_EXTRACT_TRACER", None)
    r = subprocess.run([sys.executable, "-c", code, str(SUITE / "epi_linear_bias_gelu.py")], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    print(r.stdout.strip())
