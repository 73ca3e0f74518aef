"""The KernelBench-shaped conv suite (problems/cv1_*.py, cv2_*.py; issue 38 item 5) on the CPU: every file
loads through the loader, its fp32 input and output stay within the suite's 4 GiB rule (shapes on the meta
device, nothing allocated), its Model runs on a small input of the same channels, and extraction yields
the ops below. Pooling extracts as max_pool / avg_pool / adaptive_avg_pool, which lower to window stages;
convolutions extract into the IR (docs/benchmarks.md, "The conv suite")."""

import sys
from pathlib import Path

import pytest
import torch

PYDIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PYDIR))

from ucutlass_torch import loader  # noqa: E402
from ucutlass_torch.extract import extract, summary  # noqa: E402

SUITE = PYDIR.parent / "problems"
FILES = sorted(SUITE.glob("cv[12]_*.py"))
GIB = 2**30

# name -> the ops extraction yields, in order ("opaque T" for an op outside the vocabulary, T its ATen target).
OPS = {
    "cv1_adaptive_avgpool2d": ["adaptive_avg_pool"],
    "cv1_avgpool1d": ["avg_pool"],
    "cv1_avgpool2d": ["avg_pool"],
    "cv1_avgpool3d": ["avg_pool"],
    "cv1_conv1d": ["conv1d"],
    "cv1_conv1d_dilated_strided": ["conv1d"],
    "cv1_conv2d_asym_input": ["conv2d"],
    "cv1_conv2d_asym_kernel": ["conv2d"],
    "cv1_conv2d_dilated_padded": ["conv2d"],
    "cv1_conv2d_k11_s4_cin3": ["conv2d"],
    "cv1_conv2d_square": ["conv2d"],
    "cv1_conv3d_asym_kernel": ["conv3d"],
    "cv1_conv3d_cin3": ["conv3d"],
    "cv1_convt1d": ["conv_transpose1d"],
    "cv1_convt1d_strided_dilated": ["conv_transpose1d"],
    "cv1_convt2d": ["conv_transpose2d"],
    "cv1_convt2d_strided_grouped_dilated": ["conv_transpose2d"],
    "cv1_convt3d_asym_kernel": ["conv_transpose3d"],
    "cv1_convt3d_strided_grouped": ["conv_transpose3d"],
    "cv1_depthwise2d": ["conv2d"],
    "cv1_depthwise2d_asym_input": ["conv2d"],
    "cv1_depthwise_separable2d": ["conv2d", "conv2d"],
    "cv1_maxpool1d": ["max_pool"],
    "cv1_maxpool2d": ["max_pool"],
    "cv1_maxpool3d": ["max_pool"],
    "cv1_pointwise2d": ["conv2d"],
    "cv2_conv2d_batchnorm_scale": ["conv2d", "batch_norm", "mul"],
    "cv2_conv2d_bias_scale_sigmoid_groupnorm": ["conv2d", "add", "mul", "sigmoid", "group_norm"],
    "cv2_conv2d_gelu_global_avgpool": ["conv2d", "gelu", "adaptive_avg_pool", "squeeze", "squeeze"],
    "cv2_conv2d_groupnorm_residual_logsumexp": ["conv2d", "group_norm", "tanh", "hardswish", "add", "logsumexp"],
    "cv2_conv2d_hardswish_maxpool_mish": ["conv2d", "sub", "hardswish", "max_pool", "mish"],
    "cv2_conv2d_min_tanh_tanh": ["conv2d", "min", "tanh", "tanh"],
    "cv2_conv2d_relu_bias": ["conv2d", "relu", "add"],
    "cv2_conv3d_min_softmax": ["conv3d", "min", "softmax"],
    "cv2_conv3d_mish_tanh": ["conv3d", "mish", "tanh"],
    "cv2_convt2d_bias_clamp_scale": ["conv_transpose2d", "add", "clamp", "mul", "clamp", "div"],
}


def test_the_suite_is_the_table():
    assert [p.stem for p in FILES] == sorted(OPS)


def _meta(path):
    """(model, inputs, output) on the meta device, after model.eval() as the loader does."""
    lp = loader.load_problem(path)
    with torch.device("meta"), loader._placed("meta"):
        torch.manual_seed(42)
        model = lp.module.Model(*lp.module.get_init_inputs()).eval()
        inputs = lp.module.get_inputs()
        with torch.no_grad():
            out = model(*inputs)
    return lp, model, inputs, out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_loads_fits_and_runs_small(path):
    lp, _, inputs, out = _meta(path)
    doc = lp.module.__doc__ or ""
    assert doc.startswith("KB L1 #" if path.stem.startswith("cv1_") else "KB L2 #") or "no KernelBench" in doc
    [x] = inputs
    assert x.dtype == torch.float32
    for t in (x, out):  # the suite's rule: a batch is halved where a tensor would pass 4 GiB
        assert t.numel() * 4 <= 4 * GIB, f"{list(t.shape)}: {t.numel() * 4 / GIB:.2f} GiB"
    # The same Model on a small input of the file's channels: batch 2, 24 per spatial dim.
    torch.manual_seed(42)
    model = lp.module.Model(*lp.module.get_init_inputs()).eval()
    small = torch.rand(2, x.shape[1], *[24] * (x.dim() - 2))
    with torch.no_grad():
        y = model(small)
    assert y.shape[0] == 2 and y.dim() == out.dim() and torch.isfinite(y).all()


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_extracts_the_recorded_ops(path):
    doc = extract(path)
    ops = [o["op"] if o["op"] != "opaque" else
           "opaque " + o["attrs"]["target"].removeprefix("aten::").removesuffix(".default") for o in doc["ops"]]
    assert ops == OPS[path.stem]
    _, _, _, out = _meta(path)
    [name] = doc["outputs"]
    assert [t["shape"] for t in doc["tensors"] if t["name"] == name] == [list(out.shape)]


def test_conv_attributes_and_flops():
    doc = extract(SUITE / "cv1_convt3d_strided_grouped.py")
    [op] = doc["ops"]
    assert op["attrs"] == {"stride": [2, 2, 2], "padding": [1, 2, 3], "dilation": [1, 1, 1], "groups": 4,
                           "output_padding": [1, 1, 1]}
    # transposed: 2 x input elements x (Cout / groups) x kernel volume
    assert summary(doc)["flops_tensor"] == 2 * (8 * 32 * 12 * 24 * 48) * (32 // 4) * (3 * 5 * 7)
    # fprop: 2 x output elements x (Cin / groups) x kernel volume
    assert summary(extract(SUITE / "cv1_conv2d_square.py"))["flops_tensor"] == 2 * (8 * 128 * 1022 * 1022) * 16 * 9
    assert summary(extract(SUITE / "cv1_depthwise2d.py"))["flops_tensor"] == 2 * (16 * 64 * 510 * 510) * 1 * 9


def test_pool_attributes_and_flops():
    [op] = extract(SUITE / "cv1_maxpool3d.py")["ops"]
    assert op["attrs"] == {"kernel_size": [3, 3, 3], "stride": [2, 2, 2], "padding": [1, 1, 1],
                           "dilation": [3, 3, 3], "ceil_mode": False}
    assert op["flops"] == 16 * 32 * 62 * 62 * 62 * 27  # one comparison per window element
    [op] = extract(SUITE / "cv1_avgpool2d.py")["ops"]  # stride defaults to the window
    assert op["attrs"] == {"kernel_size": [11, 11], "stride": [11, 11], "padding": [0, 0], "ceil_mode": False,
                           "count_include_pad": True, "divisor_override": None}
    out = 1
    for d in next(t["shape"] for t in extract(SUITE / "cv1_avgpool2d.py")["tensors"] if t["kind"] == "output"):
        out *= d
    assert op["flops"] == out * 121 + out  # a window's adds, then one divide
    doc = extract(SUITE / "cv2_conv2d_gelu_global_avgpool.py")
    [op] = [o for o in doc["ops"] if o["op"] == "adaptive_avg_pool"]
    assert op["attrs"] == {"output_size": [1, 1]}
    [shape] = [t["shape"] for t in doc["tensors"] if t["name"] == op["inputs"][0]]
    n = 1
    for d in shape:
        n *= d
    assert op["flops"] == n + shape[0] * shape[1]  # every element once (global), one divide per output
