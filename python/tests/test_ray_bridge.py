"""The Ray compile executor's bridge on a local Ray cluster (a head and two worker nodes on this
machine, ray.cluster_utils): jobs spread over the workers, a worker killed mid-job loses nothing
(Ray re-runs its task on the other node), every job answers exactly once, and a failed compile
is an answer, not an error. The "compiler" is a small script standing in for nvcc (it copies its
input to its output and says which node ran it), so the test needs no CUDA."""

from __future__ import annotations

import base64
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from ucutlass_torch import ray_bridge  # noqa: E402

FAKE_NVCC = """#!/usr/bin/env python3
import sys, time, shutil
args = sys.argv[1:]
src, out = args[args.index("-c") + 1], args[args.index("-o") + 1]
time.sleep(float(open(src).read().split()[1]))
if "fail" in open(src).read():
    print("a.cu(1): error: fake failure", file=sys.stderr); sys.exit(2)
shutil.copy(src, out)
"""


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    workers = [c.add_node(num_cpus=1, resources={"ucutlass_compile": 1}) for _ in range(2)]
    c.wait_for_nodes()
    yield c, workers
    c.shutdown()


def job(tmp_path, i, seconds, body="ok"):
    src = tmp_path / f"u{i}.cu"
    src.write_text(f"sleep {seconds} {body} {i}\n")
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(FAKE_NVCC)
    nvcc.chmod(0o755)
    out = str(tmp_path / f"u{i}.o")
    return {"id": i, "argv": [str(nvcc), "-c", str(src), "-o", out],
            "inputs": {str(src): base64.b64encode(src.read_bytes()).decode()}, "outputs": [out], "timeout_s": 60}


def start_bridge(address):
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ray_bridge.__file__)))
    p = subprocess.Popen([sys.executable, "-m", "ucutlass_torch.ray_bridge", "--address", address],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    hello = json.loads(p.stdout.readline())
    return p, hello


def test_run_job_rewrites_paths_and_reports_failures(tmp_path):
    r = ray_bridge.run_job(**{k: v for k, v in job(tmp_path, 1, 0).items() if k in ("argv", "inputs", "outputs")},
                           timeout_s=30)
    assert r["rc"] == 0 and len(r["outputs"]) == 1
    assert base64.b64decode(next(iter(r["outputs"].values()))).startswith(b"sleep 0 ok 1")
    bad = job(tmp_path, 2, 0, body="fail")
    r = ray_bridge.run_job(bad["argv"], bad["inputs"], bad["outputs"], 30)
    assert r["rc"] == 2 and "fake failure" in r["log"] and r["outputs"] == {}


def test_jobs_spread_over_workers_and_survive_a_killed_worker(cluster, tmp_path):
    c, workers = cluster
    bridge, hello = start_bridge(c.address)
    try:
        assert hello["ready"], hello
        assert hello["compile_nodes"] == 2
        n = 6
        for i in range(n):
            bridge.stdin.write(json.dumps(job(tmp_path, i, 3)) + "\n")
        bridge.stdin.flush()
        time.sleep(1.5)  # the first two jobs run, one on each worker
        # A build node dies (not the one the bridge's driver attached to: a real driver runs on
        # its own host).
        victim = next(w for w in workers if w.node_id != hello["driver_node"])
        c.remove_node(victim, allow_graceful=False)
        replies = [json.loads(bridge.stdout.readline()) for _ in range(n)]
    finally:
        bridge.stdin.close()
        bridge.wait(timeout=60)
    ids = sorted(r["id"] for r in replies)
    assert ids == list(range(n)), replies  # every job answered exactly once
    assert all("error" not in r and r["rc"] == 0 for r in replies), replies
    for r in replies:
        out = next(iter(r["outputs"].values()))
        assert base64.b64decode(out).split()[3] == str(r["id"]).encode()
    assert len({r["node"] for r in replies}) >= 1
    workers.remove(victim)
    workers.append(c.add_node(num_cpus=1, resources={"ucutlass_compile": 1}))  # leave the cluster as it was


def test_an_unreachable_cluster_is_reported_not_raised():
    p = subprocess.run([sys.executable, "-m", "ucutlass_torch.ray_bridge", "--address", "127.0.0.1:1"],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ray_bridge.__file__))))
    hello = json.loads(p.stdout.splitlines()[0])
    assert hello["ready"] is False and "cannot connect" in hello["error"]
    assert p.returncode == 3


def test_every_address_form_is_read_for_the_probe():
    assert ray_bridge._host_port("10.0.0.1:6379") == ("10.0.0.1", 6379)
    assert ray_bridge._host_port("ray://head.example:10001") == ("head.example", 10001)
    assert ray_bridge._host_port("[::1]:6379") == ("::1", 6379)
    assert ray_bridge._host_port(":6379") == ("127.0.0.1", 6379)
    # Ray resolves these itself: no probe.
    for address in ("auto", "local", "head.example", "ray://head.example"):
        assert ray_bridge._host_port(address) is None
        assert ray_bridge._unreachable(address) == ""


class _Silent:
    """A port that accepts connections and never answers (nobody accepts: the kernel completes the
    handshake), as a hung server or the wrong port does."""

    def __enter__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        return f"127.0.0.1:{self.sock.getsockname()[1]}"

    def __exit__(self, *exc):
        self.sock.close()


class _Http:
    """A web server: it answers, but not as a gRPC server does."""

    def __enter__(self):
        class Quiet(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):  # noqa: D102 - the test's output stays its own
                pass

        self.srv = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()
        return f"127.0.0.1:{self.srv.server_address[1]}"

    def __exit__(self, *exc):
        self.srv.shutdown()
        self.srv.server_close()


@pytest.mark.parametrize("server,said", [(_Silent, "accepted the connection but did not answer as a Ray head"),
                                         (_Http, "is not a Ray head: it answered")])
def test_a_port_that_is_not_a_ray_head_is_refused_in_one_line(server, said):
    """ray.init retried such a port for 180 s and printed pages of Ray's own log lines; the bridge
    probes it first (TCP, then the HTTP/2 greeting a gRPC server answers) and says so in one line.
    The subprocess's limit only keeps a regression from hanging the suite."""
    with server() as address:
        p = subprocess.run([sys.executable, "-m", "ucutlass_torch.ray_bridge", "--address", address],
                           capture_output=True, text=True, timeout=90,
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ray_bridge.__file__))))
    hello = json.loads(p.stdout.splitlines()[0])
    assert hello["ready"] is False, hello
    assert hello["error"].startswith(f"cannot connect to the Ray cluster at {address}: {address} "), hello
    assert said in hello["error"] and "ray start --head" in hello["error"], hello
    assert p.returncode == 3
    assert p.stderr.strip() == "", p.stderr  # none of Ray's log lines


def test_a_real_head_passes_the_probe(cluster):
    c, _ = cluster
    assert ray_bridge._unreachable(c.address) == ""
