"""Evaluation workers as Ray actors (python -m ucutlass_torch.ray_eval) on a local Ray cluster: a
head without CPUs and two nodes that each declare one GPU (Ray counts declared GPUs, so no CUDA is
needed). The worker behind each actor is a stand-in that answers the worker protocol and reports
what it received: the tests check that the relay speaks the protocol unchanged, that the files a
request names reach the node (and paths are restored in the response), that a worker the candidate
crashes ends the relay with its exit code, and that an actor killed in the middle of an evaluation
(as when its node dies) loses nothing: the request is answered once, by a new actor that loaded
the problem again first."""

from __future__ import annotations

import hashlib
import json
import os
import signal
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

FAKE_WORKER = r"""
import hashlib, json, os, sys, time
log = os.environ["UCUT_FAKE_WORKER_LOG"]
loaded = None
for line in sys.stdin:
    req = json.loads(line)
    cmd, rid = req["cmd"], req.get("id")
    with open(log, "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "cmd": cmd, "so": req.get("so")}) + "\n")
    if cmd == "ping":
        resp = {"id": rid, "status": "ok", "env": {"gpu": "stand-in GPU", "pid": os.getpid(),
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "")}}
    elif cmd == "load_problem":
        data = open(req["problem"], "rb").read()
        loaded = hashlib.sha256(data).hexdigest()
        resp = {"id": rid, "status": "ok", "problem": {"name": os.path.basename(req["problem"])[:-3],
                "path": req["problem"], "source_sha256": loaded}}
    elif cmd == "evaluate":
        if loaded is None:
            resp = {"id": rid, "status": "error", "error": "no problem loaded"}
        else:
            so = req["so"]
            if "crash" in os.path.basename(so):
                os._exit(7)
            if "slow" in os.path.basename(so):
                open(log + ".held", "w").write(str(os.getpid()))
                while not os.path.exists(log + ".go"):
                    time.sleep(0.05)
            resp = {"id": rid, "status": "ok", "fatal": False, "result": {"verdict": "ok",
                    "so_sha256": hashlib.sha256(open(so, "rb").read()).hexdigest(), "problem_sha256": loaded,
                    "remote_path": so, "pid": os.getpid()}}
    elif cmd == "baseline":
        resp = {"id": rid, "status": "ok", "baselines": {"cache_dir": req.get("cache_dir")}}
    elif cmd == "shutdown":
        print(json.dumps({"id": rid, "status": "ok"}), flush=True)
        sys.exit(0)
    else:
        resp = {"id": rid, "status": "error", "error": "unhandled cmd"}
    print(json.dumps(resp), flush=True)
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ray-eval")
    worker = tmp / "fake_worker.py"
    worker.write_text(FAKE_WORKER)
    log = tmp / "worker.log"
    log.write_text("")
    # Inherited by the cluster's processes (actors run the stand-in with these).
    os.environ["UCUT_FAKE_WORKER_LOG"] = str(log)
    os.environ["PYTHONPATH"] = str(ROOT / "python")
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    nodes = [c.add_node(num_cpus=1, num_gpus=1) for _ in range(2)]
    c.wait_for_nodes()
    try:
        yield {"cluster": c, "nodes": nodes, "worker": worker, "log": log, "tmp": tmp}
    finally:
        c.shutdown()


class Relay:
    def __init__(self, cluster, *extra):
        argv = [sys.executable, "-m", "ucutlass_torch.ray_eval", "--address", cluster["cluster"].address,
                "--worker-argv", json.dumps([sys.executable, str(cluster["worker"])]), *extra]
        env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self.err: list = []
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr), daemon=True).start()
        self.next_id = 1

    def send(self, req):
        req = dict(req, id=self.next_id)
        self.next_id += 1
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()

    def request(self, req):
        self.send(req)
        line = self.proc.stdout.readline()
        assert line, f"no response (exit {self.proc.poll()}): {''.join(self.err)}"
        return json.loads(line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def files(tmp, name, text):
    p = tmp / name
    p.write_bytes(text.encode())
    return p, hashlib.sha256(text.encode()).hexdigest()


def test_the_relay_speaks_the_worker_protocol_and_sends_the_files_a_request_names(cluster):
    tmp = cluster["tmp"]
    problem, problem_sha = files(tmp, "kb_relay_problem.py", "class Model: pass\n# relay\n")
    so, so_sha = files(tmp, "cand_relay.so", "not really a library, but bytes that must arrive")
    r = Relay(cluster)
    try:
        pong = r.request({"cmd": "ping"})
        assert pong["status"] == "ok" and pong["id"] == 1
        # The actor holds one of the cluster's (declared) GPUs, and says on which node.
        assert pong["env"]["cuda_visible_devices"] != ""
        assert pong["env"]["ray_node"] in {n.node_id for n in cluster["nodes"]}
        loaded = r.request({"cmd": "load_problem", "problem": str(problem), "seed": 42})
        assert loaded["status"] == "ok", loaded
        assert loaded["problem"]["source_sha256"] == problem_sha
        assert loaded["problem"]["path"] == str(problem)  # rewritten back to the caller's path
        assert loaded["problem"]["name"] == "kb_relay_problem"  # the file keeps its name there
        ev = r.request({"cmd": "evaluate", "so": str(so), "profile": "default"})
        assert ev["status"] == "ok", ev
        assert ev["result"]["so_sha256"] == so_sha and ev["result"]["problem_sha256"] == problem_sha
        assert ev["result"]["remote_path"] != str(so)  # the node's own copy
        base = r.request({"cmd": "baseline", "modes": ["eager"], "cache_dir": str(tmp / "local-cache")})
        assert base["baselines"]["cache_dir"] != str(tmp / "local-cache")  # a folder on the node
        bad = r.request({"cmd": "evaluate", "so": str(tmp / "missing.so")})
        assert bad["status"] == "error" and "missing.so" in bad["error"] and "cannot be read" in bad["error"]
        r.proc.stdin.write("{not json\n")
        r.proc.stdin.flush()
        junk = json.loads(r.proc.stdout.readline())
        assert junk["status"] == "error" and "bad request line" in junk["error"]
        bye = r.request({"cmd": "shutdown"})
        assert bye["status"] == "ok"
        assert r.proc.wait(timeout=60) == 0
    finally:
        r.close()


def test_a_worker_the_candidate_crashes_ends_the_relay_with_its_exit_code(cluster):
    tmp = cluster["tmp"]
    problem, _ = files(tmp, "kb_crash_problem.py", "class Model: pass\n# crash\n")
    so, _ = files(tmp, "cand_crash.so", "a kernel that kills its process")
    r = Relay(cluster)
    try:
        assert r.request({"cmd": "ping"})["status"] == "ok"
        assert r.request({"cmd": "load_problem", "problem": str(problem)})["status"] == "ok"
        r.send({"cmd": "evaluate", "so": str(so)})
        assert r.proc.stdout.readline() == ""  # no response: the worker died
        assert r.proc.wait(timeout=60) == 7
        err = "".join(r.err)
        assert "exited with code 7 without answering" in err, err
    finally:
        r.close()


def test_an_actor_lost_mid_evaluation_is_answered_once_by_a_new_actor(cluster):
    tmp, log = cluster["tmp"], cluster["log"]
    problem, problem_sha = files(tmp, "kb_lost_problem.py", "class Model: pass\n# lost node\n")
    so, so_sha = files(tmp, "cand_slow.so", "held until the node is gone")
    held, go = Path(str(log) + ".held"), Path(str(log) + ".go")
    held.unlink(missing_ok=True)
    go.unlink(missing_ok=True)
    r = Relay(cluster)
    try:
        pong = r.request({"cmd": "ping"})
        assert r.request({"cmd": "load_problem", "problem": str(problem)})["status"] == "ok"
        r.send({"cmd": "evaluate", "so": str(so)})
        deadline = time.time() + 60
        while not held.exists() and time.time() < deadline:
            time.sleep(0.1)
        assert held.exists(), "".join(r.err)
        # The actor's process dies (as it does with its node; removing a node of a one-host test
        # cluster, where every node has the same address, takes the relay's own connection too).
        os.kill(pong["env"]["ray_actor_pid"], signal.SIGKILL)
        # The held worker dies with its actor (it must not go on holding a GPU) ...
        held_pid = int(held.read_text())
        deadline = time.time() + 60
        while _alive(held_pid) and time.time() < deadline:
            time.sleep(0.1)
        assert not _alive(held_pid), "the lost actor's worker outlived it"
        go.write_text("go")  # ... and the new actor's worker is not held
        line = r.proc.stdout.readline()
        assert line, "".join(r.err)
        ev = json.loads(line)
        assert ev["status"] == "ok" and ev["id"] == 3, ev
        assert ev["result"]["so_sha256"] == so_sha and ev["result"]["problem_sha256"] == problem_sha
        assert "goes to a new actor" in "".join(r.err)
        # The new actor loaded the problem before the evaluation, and the evaluation ran twice in
        # all (once held on the lost node, once answered): one response, none duplicated.
        entries = [json.loads(x) for x in log.read_text().splitlines()]
        evals = [e for e in entries if e["cmd"] == "evaluate" and e["so"] and "cand_slow" in e["so"]]
        assert len(evals) == 2, entries
        assert ev["result"]["pid"] == evals[1]["pid"] != evals[0]["pid"]
        loads_after = [e for e in entries if e["pid"] == ev["result"]["pid"] and e["cmd"] == "load_problem"]
        assert len(loads_after) == 1
        r.send({"cmd": "ping"})
        again = json.loads(r.proc.stdout.readline())
        assert again["env"]["ray_actor_pid"] != pong["env"]["ray_actor_pid"]
        assert again["env"]["ray_node"] in {n.node_id for n in cluster["nodes"]}
    finally:
        r.close()
        go.unlink(missing_ok=True)


def test_an_unreachable_cluster_is_refused_with_the_fix():
    proc = subprocess.run([sys.executable, "-m", "ucutlass_torch.ray_eval", "--address", "127.0.0.1:1"],
                          input="", capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert proc.returncode == 3
    assert "cannot connect to the Ray cluster at 127.0.0.1:1" in proc.stderr
    assert "--eval-executor local" in proc.stderr
    assert proc.stdout == ""


def test_a_port_that_is_not_a_ray_head_is_refused_in_one_line():
    """ray.init retried a port that accepts and never answers for minutes, with Ray's own log lines;
    the relay probes it first. The subprocess's limit only keeps a regression from hanging the suite."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        proc = subprocess.run([sys.executable, "-m", "ucutlass_torch.ray_eval", "--address", address, "--count-gpus"],
                              input="", capture_output=True, text=True, timeout=90,
                              env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines() == [
        f"ray_eval: cannot connect to the Ray cluster at {address}: {address} accepted the connection but did not "
        "answer as a Ray head (a gRPC server) does within 5 s: it is not a Ray head; `ray start --head` prints the "
        "head's address; its port is 6379 unless --port said otherwise; pass --ray-address HOST:PORT of a running "
        "head, or use --eval-executor local"], proc.stderr
    assert proc.stdout == ""


def test_a_cluster_without_gpus_is_refused_with_the_fix():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0})
    try:
        proc = subprocess.run([sys.executable, "-m", "ucutlass_torch.ray_eval", "--address", c.address],
                              input="", capture_output=True, text=True, timeout=180,
                              env=dict(os.environ, PYTHONPATH=str(ROOT / "python")))
    finally:
        c.shutdown()
    assert proc.returncode == 3, proc.stderr
    assert "has no GPU" in proc.stderr and "ray start" in proc.stderr


@pytest.mark.skipif(not BIN.exists(), reason=f"no ucutlass binary at {BIN} (build it, or set UCUT_BIN)")
def test_bench_reaches_a_real_worker_through_a_ray_actor_and_checks_the_gpu_count(cluster, tmp_path):
    """ucutlass -> ray_eval -> an actor on a GPU node -> python -m ucutlass_torch.worker. This host
    has no CUDA, so the real worker answers its ping with gpu "cpu", and ucutlass refuses it with its
    usual message: the whole chain ran. Asking for more workers than the cluster has GPUs is refused
    before anything starts."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), UCUTLASS_PYTHON=sys.executable,
               UCUTLASS_CACHE=str(tmp_path / "cache"), UCUTLASS_NO_GPU="0")
    base = [str(BIN), "bench", str(ROOT / "problems"), "--match", "act_relu", "--budget", "1", "--no-memory",
            "--eval-executor", "ray", "--ray-address", cluster["cluster"].address, "-o", str(tmp_path / "out")]
    too_many = subprocess.run(base + ["--gpus", "3"], env=env, capture_output=True, text=True, timeout=300)
    assert too_many.returncode == 2, too_many.stderr
    assert "--gpus 3 with --eval-executor ray" in too_many.stderr and "has 2 GPUs" in too_many.stderr
    run = subprocess.run(base + ["--gpus", "1"], env=env, capture_output=True, text=True, timeout=600)
    said = run.stdout + run.stderr + "".join(p.read_text() for p in (tmp_path / "out").rglob("*.md"))
    assert "no CUDA GPU" in said, said
