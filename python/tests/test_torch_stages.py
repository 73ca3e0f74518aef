"""Torch stages: the PyTorch code generated for every operation of the language's torch vocabulary
(src/dsl/torch_ops.def) computes what the traced model computed. Each model below is extracted to
its Problem IR, then every IR operation is run on its own as a one-operation torch stage, and the
result must equal the model's own output (CPU, float32/float64 where exact)."""

import os
import re
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from ucutlass_torch import extract, torch_stages  # noqa: E402
from ucutlass_torch.loader import build_model, load_problem, make_inputs  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")


def def_names():
    text = open(os.path.join(ROOT, "src", "dsl", "torch_ops.def"), encoding="utf-8").read()
    return set(re.findall(r"^UCUT_TORCH_OP\((\w+),", text, re.M))


def test_every_language_operation_has_code_and_nothing_else():
    assert def_names() == set(torch_stages.OPS)


def replay(doc, model, inputs):
    """Runs the IR's ops one by one, each as a one-operation torch stage, from the model's own
    tensors; returns the IR outputs."""
    state = dict(model.state_dict())
    for n, b in model.named_buffers():
        state.setdefault(n, b)
    env = {}
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    for t in doc["tensors"]:
        if t["kind"] == "input":
            env[t["name"]] = tensors[t["index"]]
        elif t["kind"] in ("parameter", "buffer"):
            env[t["name"]] = state[t["state_dict"]]
        elif t["kind"] == "constant" and "value" in t and not isinstance(t["value"], list):
            dt = torch_stages._TORCH_DTYPES[t["dtype"]]
            env[t["name"]] = torch.full(t["shape"], torch_stages._num(t["value"]), dtype=dt)
    for i, op in enumerate(doc["ops"]):
        stage = {"stage": i, "name": f"op{i}", "ops": [dict(op, local=[True] * len(op["outputs"]))]}
        ns = {}
        exec(compile(torch_stages.PRELUDE + "\n" + torch_stages.stage_source(stage), "<test>", "exec"), ns)
        reads = {o: env[o] for o in op["inputs"] if isinstance(o, str)}
        if not reads:
            reads = {"_any": next(iter(env.values()))}  # gives the stage a device
        env.update(ns[f"_ucut_torch_stage_{i}"](reads))
    return [env[o] for o in doc["outputs"]]


MODELS = {
    "attention": '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(32, 96)
        self.c_proj = nn.Linear(32, 32)
        self.register_buffer("bias", torch.tril(torch.ones(16, 16)).view(1, 1, 16, 16))
    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(32, dim=2)
        q = q.view(B, T, 4, 8).transpose(1, 2)
        k = k.view(B, T, 4, 8).transpose(1, 2)
        v = v.view(B, T, 4, 8).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(8))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y), F.scaled_dot_product_attention(q, k, v, is_causal=True)

def get_inputs():
    return [torch.randn(2, 12, 32)]

def get_init_inputs():
    return []
''',
    "elementwise": '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def forward(self, x, y):
        a = F.gelu(x, approximate="tanh") + F.leaky_relu(y, 0.2) - F.softplus(x, beta=2.0)
        b = torch.clamp(F.elu(a), min=-0.5) * F.hardtanh(y, -0.3, 0.7) / (1 + torch.sigmoid(x))
        c = torch.where(x > y, torch.maximum(a, b), torch.minimum(a, b)) ** 2
        d = torch.exp(-c) + torch.log(1 + torch.abs(b)) + torch.rsqrt(1 + x * x) - 1 / (2 + y)
        return F.silu(d) + F.mish(c) + F.selu(b) + F.hardswish(a) + torch.tanh(x).half().float(), 3 - x

def get_inputs():
    return [torch.randn(8, 33), torch.randn(8, 33)]

def get_init_inputs():
    return []
''',
    "reductions": '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        v, i = torch.max(x, dim=1)
        return (x.sum(dim=(0, 2), keepdim=True), x.mean(), torch.amax(x, dim=-1), v, i,
                torch.argmin(x, dim=2), torch.logsumexp(x, dim=1), torch.var(x, dim=2, unbiased=False),
                torch.std(x, dim=0), torch.norm(x, p=1, dim=1), torch.prod(x, dim=1), x.min())

def get_inputs():
    return [torch.rand(4, 6, 10) + 0.5]

def get_init_inputs():
    return []
''',
    "norms_scans": '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm([6, 5])
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm2d(4)
        self.bn = nn.BatchNorm2d(4)
    def forward(self, x):
        y = self.ln(x) + self.gn(x) + self.inorm(x) + self.bn(x)
        s = torch.cumsum(y, dim=1) + torch.cumsum(y.flip(2), dim=2).flip(2) + torch.cumprod(x, dim=3)
        e = torch.cumsum(y, dim=3) - y
        return F.log_softmax(s, dim=1), torch.softmax(e, dim=-1), F.rms_norm(x, [5], eps=1e-6)

def get_inputs():
    return [torch.rand(2, 4, 6, 5) + 0.5]

def get_init_inputs():
    return []
''',
    "losses": '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def forward(self, p, t, labels, a, b, c):
        return (F.mse_loss(p, t), F.l1_loss(p, t, reduction="sum"), F.smooth_l1_loss(p, t, beta=0.5),
                F.huber_loss(p, t, delta=0.7), F.kl_div(torch.log_softmax(p, 1), torch.softmax(t, 1), reduction="batchmean"),
                F.cross_entropy(p, labels), F.cosine_similarity(a, b, dim=1),
                F.triplet_margin_loss(a, b, c, margin=0.5), F.hinge_embedding_loss(p, torch.sign(t)))

def get_inputs():
    return [torch.randn(8, 5), torch.randn(8, 5), torch.randint(0, 5, (8,)), torch.randn(8, 7),
            torch.randn(8, 7), torch.randn(8, 7)]

def get_init_inputs():
    return []
''',
    "cumsum_exclusive": '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        first = torch.zeros_like(x.select(1, 0).unsqueeze(1))
        return torch.cumsum(torch.cat((first, x), dim=1).narrow(1, 0, x.size(1)), dim=1)

def get_inputs():
    return [torch.rand(4, 32)]

def get_init_inputs():
    return []
''',
    "diag_matmul": '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, B):
        return torch.diag(a) @ B

def get_inputs():
    return [torch.rand(16), torch.rand(16, 8)]

def get_init_inputs():
    return []
''',
    "pooling": '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.pool = nn.MaxPool2d(2)
    def forward(self, x, s):
        h = self.pool(F.relu(self.conv(x)))
        return (h, F.max_pool2d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True),
                F.avg_pool2d(x, (3, 2), stride=(2, 1), padding=1, count_include_pad=False),
                F.avg_pool2d(x, 3, divisor_override=5), nn.AdaptiveAvgPool2d((5, 3))(x),
                F.adaptive_avg_pool2d(h, 1).flatten(1), F.max_pool1d(s, 3, stride=2),
                F.avg_pool1d(s, 4, stride=3, padding=2, ceil_mode=True), F.adaptive_avg_pool1d(s, 5),
                F.max_pool3d(x.unsqueeze(1), (1, 2, 2)), F.avg_pool3d(x.unsqueeze(1), 2),
                F.adaptive_avg_pool3d(x.unsqueeze(1), (2, 3, 4)))

def get_inputs():
    return [torch.randn(2, 3, 13, 11), torch.randn(2, 4, 17)]

def get_init_inputs():
    return []
''',
    "movement": '''
import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)
    def forward(self, x, idx):
        h = self.up(self.conv(x))
        a, b = torch.chunk(h, 2, dim=3)
        c = torch.cat([a, b.flip(1)], dim=1)
        d = torch.stack([c, c * 2], dim=0).permute(1, 0, 2, 3, 4).flatten(1, 2)
        e = F.pad(d, (1, 2), value=0.5)
        f = torch.tril(e[:, :, 0, :]) + torch.triu(e[:, :, 1, :], diagonal=1)
        g = torch.gather(f, 2, idx) + torch.index_select(f, 1, idx[0, 0, :2]).sum()
        return g.unsqueeze(0).expand(2, -1, -1, -1).squeeze(1), e.select(3, 2)

def get_inputs():
    return [torch.rand(2, 3, 6, 6), torch.randint(0, 8, (2, 8, 4))]

def get_init_inputs():
    return []
''',
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_replaying_the_ir_in_torch_stages_reproduces_the_model(tmp_path, name):
    path = tmp_path / f"{name}.py"
    path.write_text(MODELS[name])
    doc = extract.extract(str(path))
    lp = load_problem(str(path))
    model = build_model(lp, seed=42, device="cpu")
    inputs = make_inputs(lp, seed=7, device="cpu")
    with torch.no_grad():
        want = model(*inputs)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        got = replay(doc, model, inputs)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (name, k, g.shape, w.shape, g.dtype, w.dtype)
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5, msg=lambda m: f"{name} output {k}: {m}")


def test_stage_errors_name_the_stage_and_the_declaration():
    desc = {"torch_stages": [{"stage": 3, "name": "s3", "tensors": {"x": {"arg": 0}, "y": {"arg": 1}},
                              "ops": [{"op": "relu", "inputs": ["x"], "outputs": ["y"], "local": [False],
                                       "attrs": {}}]}]}
    host = torch_stages.Host(desc)
    x = torch.randn(4, 3)
    y = torch.empty(12)  # declared flat: the store reshapes by element count
    host.bind([x, y], None)
    assert host.run(3) == 0 and torch.equal(y, torch.relu(x).reshape(12))
    host.bind([x, torch.empty(5)], None)
    assert host.run(3) == 1 and "torch stage 's3'" in host.error and "shape [4, 3]" in host.error
    host.bind([x, torch.empty(12, dtype=torch.float16)], None)
    assert host.run(3) == 1 and "torch.float32" in host.error


def test_tmp_tensors_are_views_of_the_workspace():
    desc = {"torch_stages": [{"stage": 0, "name": "s0",
                              "tensors": {"x": {"arg": 0}, "t": {"offset": 256, "dtype": "f32", "shape": [2, 3]}},
                              "ops": [{"op": "mul", "inputs": ["x", {"scalar": "-inf"}], "outputs": ["t"],
                                       "local": [False], "attrs": {}}]}]}
    host = torch_stages.Host(desc)
    ws = torch.zeros(512, dtype=torch.uint8)
    host.bind([torch.ones(2, 3)], ws)
    assert host.run(0) == 0, host.error
    assert torch.equal(ws[256:280].view(torch.float32), torch.full((6,), float("-inf")))
