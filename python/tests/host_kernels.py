"""Shared by the tests that emit kernel libraries with the ucutlass binary and run generated SIMT
kernels as host C++ (test_window_host_cpu.py, test_permute_host_cpu.py) or read the emitted source
(test_export_suite_cpu.py): where the binary is, a checked subprocess call, and the CUDA names a
generated kernel uses, for g++ (each test adds what its kernels need beyond these: warp shuffles,
a block barrier)."""

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def binary():
    """$UCUT_BIN, else build/ucutlass or build-gpu/ucutlass; "" when none exists."""
    for c in (os.environ.get("UCUT_BIN"), os.path.join(ROOT, "build", "ucutlass"), os.path.join(ROOT, "build-gpu", "ucutlass")):
        if c and os.path.exists(c):
            return c
    return ""


def run(*args, **kw):
    """Runs a command; fails the test with its output unless it exits 0. Returns its stdout."""
    p = subprocess.run(list(args), capture_output=True, text=True, timeout=600, **kw)
    assert p.returncode == 0, f"{args}: rc={p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


# Device names the kernels use, for the host: plain functions, the ucut_simt loads and conversions.
# `blockIdx` / `threadIdx` are each test's (one thread's indices, or host threads').
COMMON_SHIMS = r"""#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
using std::fmaf; using std::isfinite; using std::isnan; using std::min;
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
namespace ucut_simt {
template <class T> float to_f(T v) { return static_cast<float>(v); }
template <class T> T from_f(float v) { return static_cast<T>(v); }
template <class T> float ld(const void* p, long long i) { return static_cast<float>(static_cast<const T*>(p)[i]); }
}  // namespace ucut_simt
struct Idx { unsigned x; };
"""
