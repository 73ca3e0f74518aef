"""The Ray compile executor's bridge: ``python -m ucutlass_torch.ray_bridge --address ADDR``.

ucutlass (C++) compiles kernels through the build module's Compiler interface; with
``--executor ray`` that interface is served by this process, which connects to a Ray cluster
(Ray is the engine: scheduling, retries, node failure) and runs every nvcc job as a Ray task on
whichever node Ray picks. The C++ side keeps its content-addressed kernel cache: a job reaches
Ray only on a cache miss, its output comes back and is cached there, so nothing is built twice.

Protocol: JSON lines. First line out: ``{"ready": true, "nodes": N, "compile_nodes": M}`` or
``{"ready": false, "error": "..."}``. Then each request line
``{"id": 7, "argv": [...], "inputs": {"/abs/a.cu": "<base64>"}, "outputs": ["/abs/a.so"],
"timeout_s": 900}`` gets, in completion order, ``{"id": 7, "rc": 0, "log": "...", "outputs":
{"/abs/a.so": "<base64>"}, "node": "10.0.0.3", "seconds": 41.2, "attempt": 1}`` or
``{"id": 7, "error": "..."}``. The task rewrites the input and output paths of ``argv`` to its own
temporary folder; include folders (CUTLASS, the runtime headers) and nvcc must exist at the same
paths on every node (docs/scale-out.md).

Placement: compile tasks need no GPU; when some node advertises the custom resource
``ucutlass_compile`` (``ray start --resources '{"ucutlass_compile": 16}'``: the CPU build nodes),
tasks require a slice of it and so run only there; otherwise Ray spreads them over all nodes.
A node that dies mid-task loses nothing: Ray re-runs the task elsewhere (``max_retries``).
This module touches no PyTorch: it lives here because ucutlass_torch is the project's one Python
package (everything else is C++).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List

COMPILE_RESOURCE = "ucutlass_compile"


def run_job(argv: List[str], inputs: Dict[str, str], outputs: List[str], timeout_s: float) -> Dict[str, Any]:
    """One nvcc job on this node: inputs written to a temporary folder, the command run with its
    paths rewritten there, the outputs read back. Never raises for a failed compile (rc != 0)."""
    work = tempfile.mkdtemp(prefix="ucut-ray-")
    started = time.time()
    try:
        mapping = {}
        for i, (path, data) in enumerate(sorted(inputs.items())):
            local = os.path.join(work, f"in{i}_{os.path.basename(path)}")
            with open(local, "wb") as f:
                f.write(base64.b64decode(data))
            mapping[path] = local
        for i, path in enumerate(outputs):
            mapping[path] = os.path.join(work, f"out{i}_{os.path.basename(path)}")
        local_argv = [mapping.get(a, a) for a in argv]
        try:
            proc = subprocess.run(local_argv, capture_output=True, text=True, timeout=timeout_s, cwd=work)
            rc, log = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            rc, log = 124, f"timed out after {timeout_s:.0f} s on {socket.gethostname()}"
        except OSError as e:
            rc, log = 127, f"could not start {local_argv[0]}: {e}"
        out = {}
        if rc == 0:
            for path in outputs:
                local = mapping[path]
                if os.path.exists(local):
                    with open(local, "rb") as f:
                        out[path] = base64.b64encode(f.read()).decode("ascii")
        return {"rc": rc, "log": log[-20000:], "outputs": out, "seconds": time.time() - started,
                "node": _node_name(), "pid": os.getpid()}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _node_name() -> str:
    try:
        import ray

        return ray.get_runtime_context().get_node_id()
    except Exception:  # noqa: BLE001 - outside Ray (tests call run_job directly)
        return socket.gethostname()


# The protocol's own stream: a copy of the original stdout. Ray prints notices of its own (a
# raylet that died, ...) to stdout; serve() points file descriptor 1 at stderr so they cannot
# interleave with protocol lines.
_proto = sys.stdout


def _emit(lock: threading.Lock, obj: Dict[str, Any]) -> None:
    with lock:
        _proto.write(json.dumps(obj) + "\n")
        _proto.flush()


def _isolate_stdout() -> None:
    global _proto
    _proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


# The HTTP/2 client greeting (RFC 9113, 3.4: the preface, then an empty SETTINGS frame). Every
# gRPC server answers it with a SETTINGS frame of its own: Ray's GCS on the head's port, and the
# Ray Client server behind ray://.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_H2_SETTINGS = 0x04
HEAD_HINT = "`ray start --head` prints the head's address; its port is 6379 unless --port said otherwise"


def _host_port(address: str):
    """(host, port) of "host:port", "[v6]:port" or "ray://host:port"; None for what Ray resolves
    itself ("auto", "local", a bare host)."""
    hostport = address.split("://", 1)[-1].rstrip("/")
    if hostport.startswith("["):
        host, _, rest = hostport[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = hostport.rpartition(":")
    if not port:
        return None
    try:
        return host or "127.0.0.1", int(port)
    except ValueError:
        return None


def _unreachable(address: str, timeout: float = 5.0) -> str:
    """Why `address` is not a Ray head this machine can reach, in one line ("" when it answers as
    one, or when the address is not host:port, e.g. "auto" or "local", which Ray resolves itself).
    ray.init alone retries for minutes and fills the terminal with Ray's own log lines, both for a
    port that refuses and for one that is not a head (a database, a web server, a silent
    listener); this says which within seconds: a TCP connection, then the HTTP/2 greeting Ray's
    gRPC servers answer (skipped when RAY_USE_TLS is on: a TLS server answers only a TLS client)."""
    hp = _host_port(address)
    if hp is None:
        return ""
    try:
        sock = socket.create_connection(hp, timeout=timeout)
    except (OSError, ValueError) as e:
        return f"{e} (is the head node running? {HEAD_HINT})"
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
            return ""
        try:
            sock.settimeout(timeout)
            sock.sendall(_H2_PREFACE)
            head = b""
            while len(head) < 9:
                got = sock.recv(9 - len(head))
                if not got:
                    break
                head += got
        except socket.timeout:
            return (f"{hp[0]}:{hp[1]} accepted the connection but did not answer as a Ray head (a gRPC server) "
                    f"does within {timeout:g} s: it is not a Ray head; {HEAD_HINT}")
        except OSError as e:
            return f"{hp[0]}:{hp[1]} accepted the connection, then failed it ({e}): it is not a Ray head; {HEAD_HINT}"
    if len(head) == 9 and head[3] == _H2_SETTINGS and head[5:9] == b"\x00\x00\x00\x00":
        return ""
    said = f"it answered {head[:16]!r} to" if head else "it closed the connection at"
    return f"{hp[0]}:{hp[1]} is not a Ray head: {said} the HTTP/2 greeting a Ray head (a gRPC server) answers; {HEAD_HINT}"


def serve(address: str, max_retries: int = 3) -> int:
    _isolate_stdout()
    lock = threading.Lock()
    # The address first: it answers in seconds, where ray.init would retry for minutes.
    why = _unreachable(address)
    if why:
        _emit(lock, {"ready": False, "error": f"cannot connect to the Ray cluster at {address}: {why}"})
        return 3
    try:
        import ray
    except ImportError as e:
        _emit(lock, {"ready": False, "error": f"Ray is not installed ({e}): pip install ray, or use --executor local"})
        return 3
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - any failure to connect is reported, not raised
        _emit(lock, {"ready": False, "error": f"cannot connect to the Ray cluster at {address}: {e}"})
        return 3
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    compile_nodes = [n for n in nodes if n.get("Resources", {}).get(COMPILE_RESOURCE, 0) > 0]
    options: Dict[str, Any] = {"num_cpus": 1, "num_gpus": 0, "max_retries": max_retries}
    if compile_nodes:
        options["resources"] = {COMPILE_RESOURCE: 1}
    else:
        options["scheduling_strategy"] = "SPREAD"
    task = ray.remote(**options)(run_job)
    _emit(lock, {"ready": True, "nodes": len(nodes), "compile_nodes": len(compile_nodes),
                 "driver_node": ray.get_runtime_context().get_node_id()})

    pending: Dict[Any, int] = {}
    requests: Dict[int, Dict[str, Any]] = {}  # id -> request, for resubmission
    resubmitted: Dict[int, int] = {}

    def submit(req: Dict[str, Any]) -> None:
        ref = task.remote(req["argv"], req.get("inputs", {}), req.get("outputs", []), float(req.get("timeout_s", 900)))
        pending[ref] = int(req["id"])
    incoming: "queue.Queue[Any]" = queue.Queue()

    def read_stdin() -> None:
        for line in sys.stdin:
            line = line.strip()
            if line:
                incoming.put(line)
        incoming.put(None)

    threading.Thread(target=read_stdin, daemon=True).start()
    closed = False
    while not closed or pending:
        # Take every request that arrived, then wait a little for results.
        try:
            while True:
                line = incoming.get(timeout=0.05 if pending else 1.0)
                if line is None:
                    closed = True
                    break
                req: Any = None
                try:
                    req = json.loads(line)
                    requests[int(req["id"])] = req
                    submit(req)
                except Exception as e:  # noqa: BLE001 - a bad request is answered, not fatal
                    _emit(lock, {"id": req.get("id", -1) if isinstance(req, dict) else -1,
                                 "error": f"bad request: {e}"})
        except queue.Empty:
            pass
        if not pending:
            continue
        done, _ = ray.wait(list(pending), num_returns=1, timeout=0.2)
        for ref in done:
            rid = pending.pop(ref)
            try:
                result = ray.get(ref)
                result["id"] = rid
                result["attempt"] = resubmitted.get(rid, 0) + 1
                requests.pop(rid, None)
                _emit(lock, result)
            except Exception as e:  # noqa: BLE001 - retries exhausted, node lost for good, ...
                # Ray retries a task whose worker or node died (max_retries), but not one whose
                # owner lost its raylet; such system failures are resubmitted here, a few times.
                system = not isinstance(e, ray.exceptions.RayTaskError) or isinstance(
                    e, (ray.exceptions.WorkerCrashedError, ray.exceptions.LocalRayletDiedError))
                if system and resubmitted.get(rid, 0) < max_retries and rid in requests:
                    resubmitted[rid] = resubmitted.get(rid, 0) + 1
                    submit(requests[rid])
                    continue
                requests.pop(rid, None)
                _emit(lock, {"id": rid, "error": f"the Ray task failed: {type(e).__name__}: {e}"[:4000]})
    return 0


def local_cluster(build_nodes: int, cpus: int) -> int:
    """A throwaway cluster on this machine (ray.cluster_utils: a head without CPUs and
    `build_nodes` nodes of `cpus` CPUs advertising ucutlass_compile), for trying --executor ray on
    one host and for measuring compile throughput per node. Prints its address on the first line
    of stdout, then runs until stdin closes."""
    from ray.cluster_utils import Cluster

    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(build_nodes):
        c.add_node(num_cpus=cpus, resources={COMPILE_RESOURCE: cpus})
    c.wait_for_nodes()
    print(c.address, flush=True)
    try:
        sys.stdin.read()
    finally:
        c.shutdown()
    return 0


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ucutlass_torch.ray_bridge")
    ap.add_argument("--address", help="the Ray cluster: host:port of the head, ray://host:10001, auto (the cluster "
                    "running on this machine) or local (a Ray started for this process alone)")
    ap.add_argument("--max-retries", type=int, default=3)
    ap.add_argument("--local-cluster", type=int, metavar="N",
                    help="instead: start a local cluster of N build nodes, print its address, run until stdin closes")
    ap.add_argument("--cpus", type=int, default=1, help="--local-cluster: CPUs (parallel compiles) per build node")
    a = ap.parse_args(argv)
    if a.local_cluster:
        return local_cluster(a.local_cluster, a.cpus)
    if not a.address:
        ap.error("--address is required (or --local-cluster N)")
    return serve(a.address, a.max_retries)


if __name__ == "__main__":
    sys.exit(main())
