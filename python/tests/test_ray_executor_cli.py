"""`ucutlass bench --plan --executor ray` on a local Ray cluster (a head without CPUs and two
build nodes advertising `ucutlass_compile`, ray.cluster_utils): the suite's compiles run as Ray
tasks on the build nodes, one build node is killed mid-suite, and the suite still ends with every
planned candidate built, each compile job answered once (0 lost, 0 duplicated). nvcc is a stand-in
script (UCUTLASS_NVCC) that copies its inputs to its output after a second, so no CUDA is needed;
it logs every job it starts and holds it until the test creates a "go" file, so the kill lands
while jobs are running on both build nodes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("UCUT_BIN", ROOT / "build" / "ucutlass"))

FAKE_NVCC = r"""#!/usr/bin/env python3
import os, sys, time
args = sys.argv[1:]
if "--version" in args:
    print("nvcc: NVIDIA (R) Cuda compiler driver\nCuda compilation tools, release 13.0, V13.0.88 (stand-in)")
    sys.exit(0)
out = args[args.index("-o") + 1]
ins = [a for a in args if a.endswith((".cu", ".o")) and a != out and os.path.exists(a)]
log_path = os.environ["UCUT_FAKE_NVCC_LOG"]
with open(log_path, "a") as log:
    log.write(f"{os.getpid()} {os.path.basename(out)}\n")
# Hold every job until the test says go (it kills a build node while two jobs are held).
go = log_path + ".go"
for _ in range(1200):
    if os.path.exists(go):
        break
    time.sleep(0.1)
time.sleep(0.2)
with open(out, "wb") as f:
    for i in ins:
        f.write(open(i, "rb").read()[:4096])
"""


def stand_in_nvcc(tmp_path, hold: bool):
    """The environment ucutlass runs in with the stand-in nvcc (no GPU, a fresh cache), and the
    stand-in's job log (inherited by the cluster's workers through the environment); ``hold``:
    jobs wait for the test's "go" file, else they run at once."""
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(FAKE_NVCC)
    nvcc.chmod(0o755)
    log = tmp_path / "nvcc.log"
    log.write_text("")
    if not hold:
        Path(str(log) + ".go").write_text("go")
    os.environ["UCUT_FAKE_NVCC_LOG"] = str(log)
    env = dict(os.environ, UCUTLASS_NVCC=str(nvcc), UCUTLASS_NO_GPU="1", UCUTLASS_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=str(ROOT / "python"), UCUTLASS_PYTHON=sys.executable)
    return env, log


def build_cluster():
    """A head without CPUs and two build nodes advertising `ucutlass_compile`."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    nodes = [cluster.add_node(num_cpus=1, resources={"ucutlass_compile": 1}) for _ in range(2)]
    cluster.wait_for_nodes()
    return cluster, nodes


@pytest.mark.skipif(not BIN.exists(), reason=f"no ucutlass binary at {BIN} (build it, or set UCUT_BIN)")
def test_a_planning_suite_compiles_on_ray_and_survives_a_killed_build_node(tmp_path):
    env, log = stand_in_nvcc(tmp_path, hold=True)
    cluster, nodes = build_cluster()
    try:
        out = tmp_path / "out"
        cmd = [str(BIN), "bench", str(ROOT / "problems"), "--match", "act_relu,act_gelu,epi_linear_bias_relu",
               "--plan", "--budget", "2", "--no-memory", "--executor", "ray", "--ray-address", cluster.address,
               "--out", str(out), "--build-dir", str(tmp_path / "build")]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        err_lines: list = []
        reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
        reader.start()
        deadline = time.time() + 240
        driver = None
        while time.time() < deadline and proc.poll() is None:
            for line in list(err_lines):
                m = re.search(r"driver on node (\w+)", line)
                driver = m.group(1) if m else driver
            if driver and len(log.read_text().splitlines()) >= 2:  # both build nodes hold a job
                break
            time.sleep(0.2)
        running = proc.poll() is None
        assert running and driver, (running, driver, "".join(err_lines))
        # A build node dies mid-suite: one the bridge's driver is not attached to (a real driver
        # runs on its own host, where no build node shares its raylet).
        victim = next(n for n in nodes if n.node_id != driver)
        cluster.remove_node(victim, allow_graceful=False)
        Path(str(log) + ".go").write_text("go")
        proc.wait(timeout=600)
        reader.join(timeout=30)  # the one reader of stderr (communicate() would compete with it)
        stderr = "".join(err_lines)
    finally:
        cluster.shutdown()
    assert proc.returncode == 0, stderr
    assert "compiles run on the Ray cluster" in stderr and "2 of them build nodes" in stderr, stderr
    m = re.search(r"Ray compile jobs: (\d+)", stderr)
    assert m, stderr
    report = json.loads((out / "report.json").read_text())
    assert report["planned"] == 3, report
    md = (out / "report.md").read_text()
    assert "3 of 3 problems planned" in md
    # Every planned candidate built (a lost job would leave its library missing).
    built = list((tmp_path / "build").rglob("*.so"))
    assert len(built) == 6, sorted(str(b) for b in built)
    # Each job answered once: the libraries' job count is what the bridge reported (a killed
    # node's job re-runs, so the stand-in may have started it twice, but it is answered once).
    assert int(m.group(1)) >= 6
    started = log.read_text().splitlines()
    assert len(started) >= int(m.group(1))


@pytest.mark.skipif(not BIN.exists(), reason=f"no ucutlass binary at {BIN} (build it, or set UCUT_BIN)")
def test_warmup_builds_its_units_on_ray_build_nodes(tmp_path):
    # `ucutlass warmup --executor ray`: each stored unit's object is a Ray task on a build node and
    # comes back into this machine's kernel store (the zoo a GPU host then imports).
    env, log = stand_in_nvcc(tmp_path, hold=False)
    cluster, _ = build_cluster()
    try:
        cmd = [str(BIN), "warmup", "--suite", str(ROOT / "problems"), "--match", "epi_linear_bias_relu", "--top-k", "2",
               "--profile", "kb-v01", "--executor", "ray", "--ray-address", cluster.address, "-j", "2"]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    finally:
        cluster.shutdown()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "compiles run on the Ray cluster" in proc.stderr and "2 of them build nodes" in proc.stderr, proc.stderr
    assert "warmup: 2 built" in proc.stdout and "Ray compile jobs: 2" in proc.stdout, proc.stdout
    stage = tmp_path / "cache" / "kernels" / "stage"
    objects = sorted(stage.glob("*.o"))
    assert len(objects) == 2 and all(o.stat().st_size > 0 for o in objects), objects
    assert len(log.read_text().splitlines()) == 2  # one nvcc job a unit, each on a build node
