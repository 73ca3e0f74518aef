"""The conv stage on a GPU, one problem per category the lowering covers, and one under the bf16
policy (issue 38 item 7; CTest
label `gpu` through tests/gpu/run_eval_gpu_tests.sh): `ucutlass optimize` with one attempt under
the kb-v01 contract (six trials, NaN-filled outputs, guard zones, the re-check after timing), and
the attempt must be a correct kernel whose program has a `conv` stage. Speed is not asserted here
(docs/benchmarks.md, runs CI and CJ). The kernel store is $UCUTLASS_CACHE when set (a zoo imported
there saves the compiles), else a fresh one. Needs a CUDA GPU, the ucutlass binary
($UCUT_GPU_BIN, else build-gpu/ or build/), nvcc and the CUTLASS headers; skipped otherwise."""

import json
import os
import subprocess

import pytest

from gpu_helpers import ROOT, have_gpu, ucutlass_binary

BIN = ucutlass_binary()
pytestmark = pytest.mark.skipif(not (BIN and have_gpu()), reason="needs a CUDA GPU and the ucutlass binary")

CATEGORIES = [
    "cv1_conv1d_dilated_strided",        # 1-D, stride and dilation
    "cv1_conv2d_asym_kernel",            # 2-D, asymmetric kernel
    "cv1_conv2d_k11_s4_cin3",            # C = 3 padded to 4, stride 4
    "cv1_conv3d_asym_kernel",            # 3-D
    "cv1_convt2d",                       # stride-1 transposed: fprop of the flipped weight
    "cv2_conv2d_batchnorm_scale",        # eval BatchNorm folded into the epilogue
    "cv2_conv2d_hardswish_maxpool_mish",  # epilogue, then a pool in a torch stage
    "cv2_conv2d_min_tanh_tanh",          # a min over the channels reading the NHWC rows (no copy back)
    "cv2_convt2d_bias_clamp_scale",      # stride-2 transposed: four output phases writing slices
    "cv1_convt3d_strided_grouped",       # grouped and strided transposed 3-D: 4 groups x 8 phases
]


# (problem, policy): the categories under tf32, and one conv under the bf16 policy (its layout
# copies convert x and w to bf16; kb-v01's 1e-2 admits bf16's rounding)
CASES = [(n, "tf32") for n in CATEGORIES] + [("cv1_conv2d_asym_kernel", "bf16")]


def first_attempt(name, policy, tmp_path):
    """`ucutlass optimize` with one attempt; its first attempt and the problem's output folder."""
    env = dict(os.environ)
    env.setdefault("UCUTLASS_CACHE", str(tmp_path / "cache"))
    env["UCUTLASS_STORE"] = str(tmp_path / "store.sqlite")
    out = subprocess.run([BIN, "optimize", os.path.join(ROOT, "problems", name + ".py"), "-o", str(tmp_path / "out"),
                          "--budget", "1", "--profile", "kb-v01", "--policy", policy, "--no-memory"],
                         capture_output=True, text=True, timeout=900, env=env)
    folder = tmp_path / "out" / name
    assert (folder / "attempts.jsonl").exists(), out.stdout[-2000:] + out.stderr[-2000:]
    attempts = [json.loads(line) for line in open(folder / "attempts.jsonl") if line.strip()]
    attempts = [a for a in attempts if a.get("kind") == "attempt"]
    assert attempts, out.stdout[-2000:]
    return attempts[0], folder


@pytest.mark.parametrize("name,policy", CASES)
def test_conv_category_is_a_correct_kernel(name, policy, tmp_path):
    first, folder = first_attempt(name, policy, tmp_path)
    assert " = conv(" in first["candidate"]["program"], first["candidate"]["program"]
    if policy == "bf16":
        assert "precision bf16" in first["candidate"]["program"], first["candidate"]["program"]
    assert first["status"] == "ok", f"{first['status']}: {first.get('message', '')[:600]}"
    assert first["time_s"] > 0 and first["max_abs_err"] <= 1e-2
    # The report's speed of light and memory key are the GPU measured on, not the hardware row the
    # problem was prepared with (run CU, on an H100, printed the H200's SOL section).
    report = json.load(open(folder / "report.json"))
    assert report["sol"]["gpu"]["name"] == report["gpu"], (report["sol"]["gpu"], report["gpu"])
    assert report["memory_key"]["gpu"] == report["gpu"], (report["memory_key"], report["gpu"])


def test_depthwise_separable_is_a_window_stage_then_a_gemm(tmp_path):
    # The window stage writes its NCHW result through a view of the [N, C, H*W] tensor the
    # pointwise conv's batched GEMM reads (no layout copies; docs/optimizer.md, pass_match_conv).
    first, _ = first_attempt("cv1_depthwise_separable2d", "tf32", tmp_path)
    program = first["candidate"]["program"]
    assert " = window sum(" in program and " = gemm(" in program and " = conv(" not in program, program
    assert first["status"] == "ok", f"{first['status']}: {first.get('message', '')[:600]}"
    assert first["time_s"] > 0 and first["max_abs_err"] <= 1e-2
