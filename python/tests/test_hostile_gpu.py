"""Hostile kernel libraries through `ucutlass eval` on a GPU (docs/eval-contract.md §1-§2, issue 36
item 13): a ReLU that writes nothing, writes half, works on a side stream, does half the work after
its first 12 calls, does half the work when its output already holds a result, hangs, faults,
crashes on the host, writes 1 MiB past its output, or rounds to bf16. Each must end as the contract
says, the worker must survive or be replaced, and every record must reach the output and the store.

Self-contained: the libraries are compiled here from tests/gpu/kernels/relu_hostile.cu with nvcc
($NVCC, else nvcc on PATH or /usr/local/cuda/bin/nvcc) for the GPU's own architecture; the
ucutlass binary is $UCUT_GPU_BIN, else build-gpu/ucutlass or build/ucutlass. Skipped without a CUDA
GPU, nvcc or the binary. Run: `.venv/bin/python -m pytest -v python/tests/test_hostile_gpu.py`
(tests/gpu/run_eval_gpu_tests.sh, CTest label `gpu`, runs it too)."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from gpu_helpers import ucutlass_binary

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SOURCE = os.path.join(ROOT, "tests", "gpu", "kernels", "relu_hostile.cu")
PROBLEM = os.path.join(ROOT, "tests", "gpu", "problems", "relu_hostile.py")
ROWS, COLS = 8192, 4096

VARIANTS = {"ok": 0, "nothing": 1, "half": 2, "side_stream": 3, "tired": 4, "reads_output": 5, "hang": 6,
            "fault": 7, "segfault": 8, "overrun": 9, "bf16": 10}


def _gpu_capability():
    try:
        import torch
        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability(0)
            return f"{major}{minor}"
    except ImportError:
        pass
    return ""


def _nvcc():
    for c in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.path.exists(c):
            return c
    return ""


SM, NVCC, BIN = _gpu_capability(), _nvcc(), ucutlass_binary()
pytestmark = pytest.mark.skipif(not (SM and NVCC and BIN),
                                reason=f"needs a CUDA GPU ({SM or 'none'}), nvcc ({NVCC or 'none'}) and the ucutlass "
                                       f"binary ({BIN or 'none'})")


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """Every variant compiled (in parallel), name -> .so path."""
    out = tmp_path_factory.mktemp("hostile")
    flags = ["-O2", "-shared", "-Xcompiler", "-fPIC,-fvisibility=hidden", f"-arch=sm_{SM}", "-cudart", "static",
             f"-DROWS={ROWS}", f"-DCOLS={COLS}", "-I", os.path.dirname(SOURCE)]
    procs = {name: subprocess.Popen([NVCC, *flags, f"-DVARIANT={v}", "-o", str(out / f"relu_{name}.so"), SOURCE],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for name, v in VARIANTS.items()}
    for name, p in procs.items():
        text, _ = p.communicate(timeout=600)
        assert p.returncode == 0, f"nvcc {name}: {text}"
    return {name: str(out / f"relu_{name}.so") for name in VARIANTS}


def copy_of(libs, name, as_name):
    """The same library under another file name (a record's candidate is its file name)."""
    path = os.path.join(os.path.dirname(libs[name]), f"relu_{as_name}.so")
    if not os.path.exists(path):
        shutil.copyfile(libs[name], path)
    return path


def ucut_eval(paths, tmp_path, *extra, env=None):
    db = tmp_path / "store.db"
    cmd = [BIN, "eval", PROBLEM, *[a for p in paths for a in ("--so", p)], "--json", "--no-compile-baseline",
           "--gpus", os.environ.get("UCUT_GPU_LIST", "0"), "--db", str(db), *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3000, env=dict(os.environ, **(env or {})))
    assert p.stdout.strip().startswith("["), f"rc={p.returncode}\nstdout:{p.stdout}\nstderr:{p.stderr}"
    recs = json.loads(p.stdout)
    for r in recs:
        sys.stderr.write(f"{r['candidate']}: {r['status']} phase={r['phase']} median={r['median_ms']} "
                         f"sol={r['t_sol_ms']} suspect={r['timing_suspect']} err={r['error'][:300]}\n")
    return recs, db


def test_every_hostile_library_ends_as_the_contract_says(libs, tmp_path):
    log = tmp_path / "skips.log"
    order = ["nothing", "half", "side_stream", "tired", "reads_output",
             "hang", ("ok", "ok_after_hang"), "fault", ("ok", "ok_after_fault"), "segfault",
             ("ok", "ok_after_segfault"), "overrun", ("ok", "ok_after_overrun"), "bf16"]
    paths = [copy_of(libs, *o) if isinstance(o, tuple) else libs[o] for o in order]
    recs, db = ucut_eval(paths, tmp_path, "--timeout", "60", env={"UCUT_HOSTILE_LOG": str(log)})
    by = {r["candidate"].replace(".so", "").replace("relu_", ""): r for r in recs}
    # Nothing recorded is lost: one record per library, in order, in the output and in the store.
    assert [r["candidate"] for r in recs] == [os.path.basename(p) for p in paths]
    with sqlite3.connect(db) as c:
        stored = [json.loads(row[0]) for row in c.execute("SELECT record_json FROM measurements ORDER BY id")]
    assert sorted((r["candidate"], r["status"]) for r in stored) == sorted((r["candidate"], r["status"]) for r in recs)

    for name in ("nothing", "half"):
        r = by[name]
        assert r["status"] == "mismatch" and "NaN" in r["error"], (name, r["error"])
    # Correct whenever checked; its work is invisible to the events on the caller's stream.
    r = by["side_stream"]
    assert not r["counted"], r
    assert (r["status"] == "rejected" and "faster than speed of light" in r["error"]) or r["timing_suspect"], r
    # Half the work once the trials are over: what the last timed repetition wrote is checked.
    r = by["tired"]
    assert r["status"] == "mismatch" and r["phase"] == "recheck" and "after timing" in r["error"], r
    # The timing loop overwrites the outputs before every repetition: it never finds a result there.
    r = by["reads_output"]
    assert r["status"] == "ok", r["error"]
    assert not log.exists() or log.read_text() == "", log.read_text()
    assert by["hang"]["status"] == "timeout" and "killed" in by["hang"]["error"]
    assert by["fault"]["status"] == "launch_error"
    assert "illegal" in by["fault"]["error"].lower() or "cuda" in by["fault"]["error"].lower()
    assert by["segfault"]["status"] == "launch_error"
    r = by["overrun"]
    assert r["status"] == "rejected" and r["error"].startswith("rejected: wrote outside its outputs"), r["error"]
    assert "after output 0 'y' (the first 0 bytes past its end, the last 1048575)" in r["error"], r["error"]
    assert not r["counted"]
    r = by["bf16"]
    assert r["status"] == "mismatch" and r["passed_by"] == "" and "no reference-class pass" in r["error"], r["error"]
    # The worker survived or was replaced: a correct library after each breakage passes.
    for name in ("ok_after_hang", "ok_after_fault", "ok_after_segfault", "ok_after_overrun"):
        r = by[name]
        assert r["status"] == "ok" and r["passed_by"] == "allclose" and r["recheck_passed"], (name, r["error"])


def test_bf16_rounding_passes_kernelbenchs_loose_tolerance_by_allclose(libs, tmp_path):
    # kb-v01 (1e-2) has no reference-class pass: bf16's 2^-9 rounding passes it elementwise.
    [r], _ = ucut_eval([libs["bf16"]], tmp_path, "--profile", "kb-v01")
    assert r["status"] in ("ok", "rejected"), r["error"]
    assert r["passed_by"] == "allclose" and r["contract"].startswith("ucutlass-eval/2 kb-v01")
