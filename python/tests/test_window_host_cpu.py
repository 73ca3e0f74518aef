"""The window stage's generated kernels run on the CPU (no GPU here): each tests/gpu/problems/window_*
problem is extracted, lowered (window stages only) and its library source emitted (no nvcc); every
stage's kernel text is then compiled as host C++ with small CUDA shims (blockIdx/threadIdx, the
ucut_simt loads, warp shuffles) and run block by block, thread by thread, on the problem's inputs and
parameters, and its output compared with the PyTorch model's. A kernel has no synchronization but
its warp shuffles (the warp-per-output mode of large windows); the shim runs the grid twice: the
first pass records each lane's value at the first shuffle, the second makes that shuffle return
the warp's combined value (a sum, or a max that keeps NaN).

Needs the ucutlass binary ($UCUT_BIN, else build/ucutlass or build-gpu/ucutlass) and g++; skipped
without them. The GPU itself runs the same problems in test_worker_gpu.py (label gpu)."""

import importlib.util
import os
import re
import shutil

import numpy as np
import pytest
import torch

from host_kernels import COMMON_SHIMS, binary, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PROBLEMS = os.path.join(ROOT, "tests", "gpu", "problems")
NAMES = sorted(f[:-3] for f in os.listdir(PROBLEMS) if f.startswith("window_") and f.endswith(".py"))


BIN = binary()
pytestmark = pytest.mark.skipif(not BIN or not shutil.which("g++"),
                                reason="needs the ucutlass binary (build/ucutlass or $UCUT_BIN) and g++")

# One thread's indices, and the warp shuffles (module docstring), on top of the common shims.
SHIMS = COMMON_SHIMS + r"""static Idx blockIdx, threadIdx, gridDim;
// warp shuffles, in two passes over the grid (the module's docstring)
static int pass = 1, is_max = 0;
static unsigned call_no = 0;
static std::map<std::pair<unsigned, unsigned>, std::vector<float>> lanes;  // (warp, call) -> values
inline float combine(float t, float x) { return is_max ? ((x > t || std::isnan(x)) ? x : t) : t + x; }
inline float __shfl_xor_sync(unsigned, float a, int m) {
  const float none = is_max ? -INFINITY : 0.f;
  if (m != 16) return none;
  const unsigned warp = blockIdx.x * 1024u + threadIdx.x / 32u;
  auto& v = lanes[{warp, call_no++}];
  if (pass == 1) {
    v.resize(32, none);
    v[threadIdx.x % 32u] = a;
    return none;
  }
  float t = none;
  for (float x : v) t = combine(t, x);
  return is_max ? t : t - a;  // a + (t - a) = t
}
"""


def host_program(src, body, pre, grid, block, fields):
    """The harness of one stage's kernel: its inputs from <tensor>.bin, its output to <tensor>.out."""
    fns = "\n".join(l for l in src.splitlines() if l.startswith("static __device__ __forceinline__ float ucut_fn_"))
    groups = int(re.search(r"g < (\d+)LL", body).group(1))
    items = int(re.search(r"base = (?:\([\w ]+\))?g \* (\d+)", body).group(1))
    c = SHIMS + fns + "\n" + body + "\nint main() {\n  " + pre + "params p{};\n"
    for field, tensor in fields:
        if field == "o":
            continue
        c += (f'  std::vector<float> v_{field};\n'
              f'  {{ FILE* f = std::fopen("{tensor}.bin", "rb"); std::fseek(f, 0, SEEK_END); v_{field}.resize(std::ftell(f) / 4);\n'
              f'    std::fseek(f, 0, SEEK_SET); if (std::fread(v_{field}.data(), 4, v_{field}.size(), f) != v_{field}.size()) return 1;'
              f' std::fclose(f); }}\n  p.{field} = v_{field}.data();\n')
    out = dict((f, t) for f, t in fields)["o"]
    c += (f"  std::vector<float> out({groups * items}, NAN);\n  p.o = out.data();\n  gridDim.x = {grid};\n"
          f"  is_max = {int('a = -INFINITY' in body)};\n"
          f"  for (pass = 1; pass <= 2; ++pass)\n    for (unsigned b = 0; b < {grid}; ++b)\n"
          f"      for (unsigned t = 0; t < {block}; ++t) {{ blockIdx.x = b; threadIdx.x = t; call_no = 0; {pre}kernel(p); }}\n"
          f'  FILE* f = std::fopen("{out}.out", "wb"); std::fwrite(out.data(), 4, out.size(), f); std::fclose(f);\n}}\n')
    return c, out


def with_items(text, items):
    """The lowered program with each window stage's items_per_thread set to ``items`` where it
    divides the output's last dim (else 1): a thread's run of outputs, whose windows the kernel
    walks together where they all lie inside x."""
    last = {n: int(d.split(",")[-1]) for n, d in re.findall(r"^(?:out|tmp) (\w+) : \w+\[([^\]]*)\]", text, re.M)}

    def one(m):
        return m.group(1) + str(items if last[m.group(2)] % items == 0 else 1)
    return re.sub(r"(stage (\w+) = window .*?\{\n  threads auto\n  items_per_thread )auto", one, text)


@pytest.mark.parametrize("items", [1, 2, 4])
@pytest.mark.parametrize("name", NAMES)
def test_window_kernels_on_the_host_match_pytorch(tmp_path, name, items):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    path = os.path.join(PROBLEMS, name + ".py")
    run(BIN, "extract", path, "-o", str(tmp_path / "problem.json"), env=env)
    text = run(BIN, "lower", str(tmp_path / "problem.json"))
    assert "= torch {" not in text and " = window " in text, text
    if items > 1:
        text = with_items(text, items)
        if f"items_per_thread {items}" not in text:
            pytest.skip(f"no window stage's output rows divide by {items}")
    (tmp_path / "prog.ucut").write_text(text)
    run(BIN, "compile", str(tmp_path / "prog.ucut"), "-o", str(tmp_path / "lib"), "--emit-only")
    [cu] = [tmp_path / "lib" / f for f in os.listdir(tmp_path / "lib") if f.endswith(".cu")]
    src = cu.read_text()

    # the model's inputs and parameters, named as the program names them ('.' -> '_'), in files
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    inputs = mod.get_inputs()
    with torch.no_grad():
        ref = model(*inputs)
    refs = list(ref) if isinstance(ref, tuple) else [ref]
    ins = re.findall(r"^in (\w+) :", text, re.M)
    data = dict(zip(ins, inputs))
    data.update({k.replace(".", "_"): v for k, v in model.state_dict().items()})
    for k, v in data.items():
        v.detach().contiguous().numpy().astype(np.float32).tofile(tmp_path / f"{k}.bin")

    stages = re.findall(r"(struct (ucut_s\d+_)params \{.*?\n\};\n__global__.*?\n\}\n)int \2launch.*?<<<(\d+), (\d+)", src, re.S)
    assert len(stages) == text.count(" = window "), src
    got = {}
    for body, pre, grid, block in stages:
        assert "float s0;" not in body  # no runtime scalars in these problems
        fields = re.findall(r"  (?:const )?void\* (\w+);  // (\w+)", body)
        prog, out = host_program(src, body, pre, int(grid), int(block), fields)
        (tmp_path / f"{pre}.cpp").write_text(prog)
        run("g++", "-O2", "-std=c++17", "-w", "-o", str(tmp_path / pre), str(tmp_path / f"{pre}.cpp"))
        run(str(tmp_path / pre), cwd=str(tmp_path))
        got[out] = np.fromfile(tmp_path / f"{out}.out", dtype=np.float32)
    outs = re.findall(r"^out (\w+) :", text, re.M)
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        r = r.numpy().reshape(-1)
        g = got[o]
        assert g.shape == r.shape, (o, g.shape, r.shape)
        assert np.allclose(g, r, rtol=1e-5, atol=1e-5), f"{name} {o}: max |err| {np.max(np.abs(g - r))}"
