"""The permuting form of the elementwise stage (layout copies: NCHW <-> NHWC around a conv, a weight's
KCRS -> KRSC, permute().contiguous()) runs on the CPU (no GPU here): each program's library source is
emitted (no nvcc), every permuting stage's kernel is compiled as host C++ with small CUDA shims and
run block by block, its 256 threads as host threads meeting at a barrier for __syncthreads (the
kernel's shared-memory tile is one static array), and its output compared with NumPy's gather of
the same views. The programs are written here (odd sizes, partial tiles, outer dims, a negative
stride, a residual, row and column vectors) or lowered from the conv goldens.

Needs the ucutlass binary ($UCUT_BIN, else build/ucutlass or build-gpu/ucutlass) and g++; skipped
without them. On the GPU the conv problems' copies run in test_conv_gpu.py (label gpu)."""

import os
import re
import shutil

import numpy as np
import pytest

from host_kernels import COMMON_SHIMS, binary, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


BIN = binary()
pytestmark = pytest.mark.skipif(not BIN or not shutil.which("g++"),
                                reason="needs the ucutlass binary (build/ucutlass or $UCUT_BIN) and g++")

# Host threads for a block's threads, a barrier for __syncthreads, a static array for the tile.
SHIMS = COMMON_SHIMS + r"""#include <barrier>
#include <thread>
#define __shared__ static
static thread_local Idx blockIdx, threadIdx;
static std::barrier<>* block_barrier;
inline void __syncthreads() { block_barrier->arrive_and_wait(); }
"""


def decls(text):
    """name -> (shape, base, strides, offset) for every tensor the program declares (base None
    unless a view)."""
    out = {}
    for m in re.finditer(r"^(in|out|tmp|param) (\w+) : \w+\[([\d, ]+)\]", text, re.M):
        out[m.group(2)] = ([int(x) for x in m.group(3).split(",")], None, None, 0)
    for m in re.finditer(r"^view (\w+) : \w+\[([\d, ]+)\] = (\w+) strides \[([-\d, ]+)\](?: offset (\d+))?", text, re.M):
        out[m.group(1)] = ([int(x) for x in m.group(2).split(",")], m.group(3),
                           [int(x) for x in m.group(4).split(",")], int(m.group(5) or 0))
    return out


def gather(d, name, data):
    """NumPy's value of tensor `name`: a view's elements at its strides from its base's flat data."""
    shape, base, strides, offset = d[name]
    if base is None:
        return data[name].reshape(shape)
    at = np.full(shape, offset, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        at += (np.arange(n) * s).reshape([n if i == k else 1 for i in range(len(shape))])
    return data[base].reshape(-1)[at]


def host_program(src, body, pre, grid, fields, d):
    """One stage's kernel with its inputs from <base>.bin (a view's pointer at its offset) and its
    outputs to <tensor>.out."""
    fns = "\n".join(l for l in src.splitlines() if l.startswith("static __device__ __forceinline__ float ucut_fn_"))
    c = SHIMS + fns + "\n" + body + "\nint main() {\n  " + pre + "params p{};\n"
    outs = []
    for field, tensor in fields:
        shape, base, _, offset = d[tensor]
        if field.startswith("o"):
            c += f"  std::vector<float> v_{field}({int(np.prod(shape))}, NAN);\n  p.{field} = v_{field}.data();\n"
            outs.append((field, tensor))
            continue
        src_name = base or tensor
        c += (f'  std::vector<float> v_{field};\n'
              f'  {{ FILE* f = std::fopen("{src_name}.bin", "rb"); std::fseek(f, 0, SEEK_END); v_{field}.resize(std::ftell(f) / 4);\n'
              f'    std::fseek(f, 0, SEEK_SET); if (std::fread(v_{field}.data(), 4, v_{field}.size(), f) != v_{field}.size()) return 1;'
              f' std::fclose(f); }}\n  p.{field} = v_{field}.data() + {offset};\n')
    c += (f"  std::barrier<> bar(256);\n  block_barrier = &bar;\n"
          f"  for (unsigned b = 0; b < {grid}; ++b) {{\n    std::vector<std::thread> ts;\n"
          f"    for (unsigned t = 0; t < 256; ++t)\n"
          f"      ts.emplace_back([&p, b, t] {{ blockIdx.x = b; threadIdx.x = t; {pre}kernel(p); }});\n"
          f"    for (auto& t : ts) t.join();\n  }}\n")
    for field, tensor in outs:
        c += (f'  {{ FILE* f = std::fopen("{tensor}.out", "wb"); std::fwrite(v_{field}.data(), 4, v_{field}.size(), f);'
              f' std::fclose(f); }}\n')
    return c + "}\n", [t for _, t in outs]


def run_permuting_stages(tmp_path, text, expect_tiles=None):
    """Emits `text`'s library, runs its permuting stages on random data; returns (decls, data, outputs).
    `expect_tiles`: the (tj, tc) tile of each permuting stage, in order (None: at least one stage)."""
    (tmp_path / "prog.ucut").write_text(text)
    run(BIN, "compile", str(tmp_path / "prog.ucut"), "-o", str(tmp_path / "lib"), "--emit-only")
    [cu] = [tmp_path / "lib" / f for f in os.listdir(tmp_path / "lib") if f.endswith(".cu")]
    src = cu.read_text()
    d = decls(text)
    rng = np.random.default_rng(0)
    data = {}
    for name, (shape, base, _, _) in d.items():
        if base is None:
            data[name] = rng.standard_normal(int(np.prod(shape))).astype(np.float32)
            data[name].tofile(tmp_path / f"{name}.bin")
    stages = re.findall(r"// stage \w+ \(elementwise \(permuting\)\)[^\n]*\n// merged dims \[([\d, ]+)\], tile (\d+) \(dim \d+\) x (\d+)"
                        r"[^\n]*\n(struct (ucut_s\d+_)params \{.*?\n\};\n__global__.*?\n\}\n)int \5launch.*?<<<(\d+), 256", src, re.S)
    tiles = [(int(tj), int(tc)) for _, tj, tc, _, _, _ in stages]
    assert tiles == expect_tiles if expect_tiles is not None else tiles, src
    got = {}
    for _, _, _, body, pre, grid in stages:
        assert "__syncthreads();" in body
        fields = re.findall(r"  (?:const )?void\* (\w+);  // (\w+)", body)
        prog, outs = host_program(src, body, pre, int(grid), fields, d)
        (tmp_path / f"{pre}.cpp").write_text(prog)
        run("g++", "-O1", "-std=c++20", "-pthread", "-w", "-o", str(tmp_path / pre), str(tmp_path / f"{pre}.cpp"))
        run(str(tmp_path / pre), cwd=str(tmp_path))
        for o in outs:
            got[o] = np.fromfile(tmp_path / f"{o}.out", dtype=np.float32).reshape(d[o][0])
    return d, data, got


def test_permute_nchw_to_nhwc_with_partial_tiles(tmp_path):
    # [3, 5, 7, 9] -> [3, 7, 9, 5]: merged [3, 63, 5] at strides [315, 1, 63]; tile 64 x 8
    text = ("ucut 1\nin x : f32[3, 5, 7, 9]\nout y : f32[3, 7, 9, 5]\n"
            "view xv : f32[3, 7, 9, 5] = x strides [315, 9, 1, 63] offset 0\n"
            "stage y = elementwise { body { y = 2 * xv } }\n")
    d, data, got = run_permuting_stages(tmp_path, text, [(64, 8)])
    want = 2 * data["x"].reshape(3, 5, 7, 9).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got["y"], want, rtol=1e-6)


def test_permute_nhwc_to_nchw_with_residual_row_and_col_reads(tmp_path):
    # h NHWC [2, 6, 10, 40] read as NCHW [2, 40, 6, 10] (merged [2, 40, 60] at [2400, 1, 40]), plus a
    # contiguous residual, a per-row scale (480 rows) and a per-column bias (10 columns)
    text = ("ucut 1\nin h : f32[2, 6, 10, 40]\nin r : f32[2, 40, 6, 10]\nparam s : f32[480] = \"s\"\n"
            "param b : f32[10] = \"b\"\nout y : f32[2, 40, 6, 10]\n"
            "view hv : f32[2, 40, 6, 10] = h strides [2400, 1, 400, 40] offset 0\n"
            "stage y = elementwise { body {\n  let t = hv * s[row]\n  y = t + r + b[col]\n} }\n")
    d, data, got = run_permuting_stages(tmp_path, text, [(32, 32)])
    want = (data["h"].reshape(2, 6, 10, 40).transpose(0, 3, 1, 2) * data["s"].reshape(2, 40, 6, 1)
            + data["r"].reshape(2, 40, 6, 10) + data["b"])
    np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6)


def test_permute_with_two_outer_dims_and_a_negative_stride(tmp_path):
    # y[a, b, c, e] = x[b, a, e, c] (outer dims a, b at strides 720, 2160; a partial tile along c);
    # a transposed conv's flipped weight [C=8, K=6, 7, 7] -> [6, 7, 7, 8] (the taps at stride -1 from
    # the last one); and a batch of 3 x 3 transposes, too small a tile: the vector form
    text = ("ucut 1\nin x : f32[4, 3, 20, 36]\nin w : f32[8, 6, 7, 7]\nin m : f32[50, 3, 3]\n"
            "out y : f32[3, 4, 36, 20]\nout wf : f32[6, 7, 7, 8]\nout mt : f32[50, 3, 3]\n"
            "view xv : f32[3, 4, 36, 20] = x strides [720, 2160, 1, 36] offset 0\n"
            "view wv : f32[6, 7, 7, 8] = w strides [49, -7, -1, 294] offset 48\n"
            "view mv : f32[50, 3, 3] = m strides [9, 1, 3] offset 0\n"
            "stage y = elementwise { body { y = xv } }\n"
            "stage wf = elementwise { body { wf = wv } }\n"
            "stage mt = elementwise { body { mt = mv } }\n")
    d, data, got = run_permuting_stages(tmp_path, text, [(32, 32), (64, 8)])
    np.testing.assert_array_equal(got["y"], data["x"].reshape(4, 3, 20, 36).transpose(1, 0, 3, 2))
    np.testing.assert_array_equal(got["wf"], data["w"].reshape(8, 6, 7, 7)[:, :, ::-1, ::-1].transpose(1, 2, 3, 0))
    assert "mt" not in got  # not a permuting stage


def test_permute_interleave_of_phases(tmp_path):
    # a strided transposed conv's output phases, each an NHWC slice of z [s1*s2, N, Q1, Q2, K], into
    # NCHW y [N, K, Q1*s1, Q2*s2]: a view of y's element count ([N, K, Q1, s1, Q2, s2]) whose c-run
    # after K (stride 1) is four dims with their own strides
    n, k, q1, q2 = 2, 40, 3, 5
    big = n * q1 * q2 * k
    text = (f"ucut 1\nin z : f32[4, {n}, {q1}, {q2}, {k}]\nout y : f32[{n}, {k}, {2 * q1}, {2 * q2}]\n"
            f"view zv : f32[{n}, {k}, {q1}, 2, {q2}, 2] = z strides [{q1 * q2 * k}, 1, {q2 * k}, {2 * big}, {k}, {big}] offset 0\n"
            "stage y = elementwise { body { y = zv } }\n")
    d, data, got = run_permuting_stages(tmp_path, text, [(32, 32)])
    z = data["z"].reshape(2, 2, n, q1, q2, k)  # [phi1, phi2, n, q1, q2, k]
    want = z.transpose(2, 5, 3, 0, 4, 1).reshape(n, k, 2 * q1, 2 * q2)
    np.testing.assert_array_equal(got["y"], want)


@pytest.mark.parametrize("golden", ["conv2d_bias_relu", "conv_batchnorm_scale", "conv_transpose2d", "conv_cin3"])
def test_conv_layout_copies_run_permuting(tmp_path, golden):
    # the lowering's copies around a conv stage (every elementwise stage whose body is a plain copy of
    # a permuting view): x NCHW -> NHWC, the weight -> KRSC, the result back to NCHW
    text = run(BIN, "lower", os.path.join(ROOT, "tests", "golden", "lower", golden + ".json"))
    copies = re.findall(r"^stage (\w+) = elementwise \{(?:\n  \w+ auto)*\n  body \{\n    \1 = (\w+)\n  \}\n\}", text, re.M)
    d = decls(text)
    (tmp_path / "prog.ucut").write_text(text)
    run(BIN, "compile", str(tmp_path / "prog.ucut"), "-o", str(tmp_path / "lib"), "--emit-only")
    [cu] = [tmp_path / "lib" / f for f in os.listdir(tmp_path / "lib") if f.endswith(".cu")]
    src = cu.read_text()
    # the plain copies the code generator made permuting (the activations'; a small weight's copy
    # keeps the vector form); the result's at least (C = 3 pads x and w in `where` copies)
    blocks = re.findall(r"\(elementwise \(permuting\)\).*?\n\};", src, re.S)
    written = {o for b in blocks for o in re.findall(r"  void\* o\d+;  // (\w+)", b)}
    permuting = [(o, v) for o, v in copies if o in written]
    assert len(permuting) >= 1, src
    # run only the copies: a program of each copy alone, its source a program input
    for o, v in permuting:
        shape, base, strides, offset = d[v]
        bshape = d[base][0]
        one = (f"ucut 1\nin {base} : f32[{', '.join(map(str, bshape))}]\nout {o} : f32[{', '.join(map(str, shape))}]\n"
               f"view {v} : f32[{', '.join(map(str, shape))}] = {base} strides [{', '.join(map(str, strides))}] offset {offset}\n"
               f"stage {o} = elementwise {{ body {{ {o} = {v} }} }}\n")
        sub = tmp_path / o
        sub.mkdir()
        dd, data, got = run_permuting_stages(sub, one)
        np.testing.assert_array_equal(got[o], gather(dd, v, data))

