"""Evaluation workers as Ray actors: ``python -m ucutlass_torch.ray_eval --address ADDR``.

``ucutlass bench|optimize --eval-executor ray`` starts one of these per evaluation worker instead
of ``python -m ucutlass_torch.worker``. It speaks the worker protocol (protocol.py) on stdin and
stdout exactly as the worker does, so the C++ client (src/eval/worker_client.h) drives it
unchanged: deadlines, restarts and the records are the same. Behind it is one Ray actor that holds
one GPU (``num_gpus=1``: Ray pins it and sets CUDA_VISIBLE_DEVICES) on whichever node Ray placed it,
and that actor runs a real ``python -m ucutlass_torch.worker`` there. Timing happens inside that
worker, on its GPU, exactly as on a local one: the relay adds latency between requests, never
inside a timed region.

Files travel with the requests: ``load_problem``'s problem file and ``evaluate``'s kernel library
are read here and sent with every request that names them; the actor writes each into its folder
under its own name (a content-hash folder each, written once) and rewrites the request's path; the
response's ``problem.path`` is rewritten back. ``baseline``'s ``cache_dir`` becomes a folder on the
actor's node. The nodes need the project's Python package and PyTorch, nothing else: no nvcc,
no CUTLASS.

Failures:
- the worker exits (a kernel that crashed it, ``shutdown``, a fatal CUDA error): this process
  exits with the worker's exit code after relaying what it said, and the C++ client starts a new
  one, as it would for a local worker;
- the actor or its node dies (an infrastructure failure, not the candidate's): the request is
  sent again to a new actor (the problem loaded again first), up to ``--max-retries`` times, and
  answered once;
- the cluster is unreachable, the address is not a Ray head (ray_bridge._unreachable probes it in
  seconds, before ray.init's minutes of retries) or the cluster has no GPU: one line with the fix
  on stderr, exit 3, before any request is read.
This module touches no PyTorch itself (the worker it starts does).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from . import tmpdirs
from .ray_bridge import _unreachable

# Request fields that name a file on the machine that runs ucutlass.
FILE_FIELDS = {"load_problem": "problem", "evaluate": "so"}


def _die_with_parent() -> None:
    """The worker dies with its actor (Linux: PR_SET_PDEATHSIG), so a killed actor leaves no
    worker holding the GPU."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:  # noqa: BLE001 - not Linux: the worker then ends when its stdin closes
        pass


class EvalActor:
    """One GPU's worker on a Ray node (the class is made a Ray actor by ``serve``)."""

    def __init__(self, worker_argv: Optional[List[str]], env: Dict[str, str]):
        # The default worker runs under the node's own Python (the one Ray runs this actor with).
        worker_argv = worker_argv or [sys.executable, "-m", "ucutlass_torch.worker"]
        # its worker's stderr and the libraries it receives: removed with the actor, or at the next
        # actor's start on this node if this one was killed (tmpdirs.py)
        self.dir = tmpdirs.private_dir(self, "ucut-ray-eval")
        self.baselines = os.path.join(tempfile.gettempdir(), "ucut-ray-eval-baselines")
        os.makedirs(self.baselines, exist_ok=True)
        self.stderr_path = os.path.join(self.dir, "worker.stderr")
        full_env = dict(os.environ)
        full_env.update(env)
        self.proc = subprocess.Popen(worker_argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=open(self.stderr_path, "wb"), text=True, env=full_env,
                                     preexec_fn=_die_with_parent)

    def where(self) -> Dict[str, Any]:
        import ray

        ctx = ray.get_runtime_context()
        return {"node": ctx.get_node_id(), "host": socket.gethostname(),
                "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", ""), "pid": os.getpid()}

    def _stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, "rb") as f:
                f.seek(0, 2)
                f.seek(max(0, f.tell() - 4000))
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def call(self, req: Dict[str, Any], files: Dict[str, Tuple[str, bytes]]) -> Dict[str, Any]:
        """Writes the request's files here, rewrites their paths, sends the request to the worker
        and returns its response, or how the worker ended when it gave none."""
        for field, (digest, data) in files.items():
            folder = os.path.join(self.dir, digest[:24])
            local = os.path.join(folder, os.path.basename(req[field]))
            if not os.path.exists(local):
                os.makedirs(folder, exist_ok=True)
                tmp = local + ".tmp"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, local)
            req[field] = local
        if req.get("cmd") == "baseline" and req.get("cache_dir"):
            req["cache_dir"] = self.baselines
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            rc = self.proc.wait()
            return {"exit": rc, "stderr": self._stderr_tail()}
        out: Dict[str, Any] = {"response": line}
        if req.get("cmd") == "shutdown" or '"fatal": true' in line:
            try:
                out["exit"] = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out["exit"] = self.proc.wait()
        return out


def _read_file(path: str) -> Tuple[str, bytes]:
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha256(data).hexdigest(), data


class Relay:
    """The protocol side: one request at a time, as the worker protocol is."""

    def __init__(self, ray: Any, worker_argv: Optional[List[str]], env: Dict[str, str],
                 max_retries: int, start_timeout: float):
        self.ray = ray
        self.actor_cls = ray.remote(num_gpus=1, num_cpus=1, max_restarts=0)(EvalActor)
        self.worker_argv = worker_argv
        self.env = env
        self.max_retries = max_retries
        self.start_timeout = start_timeout
        self.actor: Any = None
        self.where: Dict[str, Any] = {}
        self.last_load: Optional[Tuple[Dict[str, Any], Dict[str, Tuple[str, bytes]]]] = None

    def start_actor(self) -> None:
        self.actor = self.actor_cls.remote(self.worker_argv, self.env)
        try:
            self.where = self.ray.get(self.actor.where.remote(), timeout=self.start_timeout)
        except self.ray.exceptions.GetTimeoutError:
            gpus = self.ray.cluster_resources().get("GPU", 0)
            raise SystemExit(_fail(f"no GPU of the Ray cluster became free for an evaluation worker within "
                                   f"{self.start_timeout:.0f} s (the cluster has {gpus:g} GPU(s), each held by one "
                                   "worker)", "ask for fewer workers (--gpus N) or add GPU nodes to the cluster"))

    def handle(self, req: Dict[str, Any]) -> Tuple[Optional[str], Optional[int]]:
        """(response line or None, exit code or None)."""
        files: Dict[str, Tuple[str, bytes]] = {}
        field = FILE_FIELDS.get(req.get("cmd", ""))
        original = req.get(field) if field else None
        if field and isinstance(original, str):
            try:
                files[field] = _read_file(original)
            except OSError as e:
                # The worker would have said the same of a missing file: answer as it does.
                return json.dumps({"id": req.get("id"), "status": "error",
                                   "error": f"{original}: cannot be read to send it to the Ray worker ({e.strerror})"}), None
        if req.get("cmd") == "load_problem":
            self.last_load = (dict(req), files)
        for attempt in range(self.max_retries + 1):
            try:
                if self.actor is None:
                    self.start_actor()
                    if self.last_load and req.get("cmd") != "load_problem":
                        # A new actor after a lost one: the problem it had, loaded again first.
                        reload = self.ray.get(self.actor.call.remote(dict(self.last_load[0]), self.last_load[1]))
                        if "response" not in reload:
                            return None, _worker_exit(reload)
                out = self.ray.get(self.actor.call.remote(dict(req), files))
                break
            except self.ray.exceptions.RayActorError as e:
                # The actor or its node died: not the candidate's doing. A new actor, the same request.
                self.actor = None
                why = (str(e).splitlines() or [""])[0][:300]
                then = (f"request {req.get('id')} goes to a new actor (retry {attempt + 1} of {self.max_retries})"
                        if attempt < self.max_retries else "no retries left")
                print(f"ray_eval: the evaluation actor on node {self.where.get('node', '?')[:12]} was lost "
                      f"({type(e).__name__}: {why}); {then}", file=sys.stderr, flush=True)
        else:
            return None, _fail(f"the Ray evaluation actor was lost {self.max_retries + 1} times in a row",
                               "check the cluster's GPU nodes (`ray status`)")
        if "response" not in out:
            return None, _worker_exit(out)
        line = out["response"].strip()
        if req.get("cmd") == "ping" or (req.get("cmd") == "load_problem" and original):
            resp = json.loads(line)
            if req.get("cmd") == "ping" and isinstance(resp.get("env"), dict):
                resp["env"]["ray_node"] = self.where.get("node", "")
                resp["env"]["ray_host"] = self.where.get("host", "")
                resp["env"]["ray_driver_node"] = self.ray.get_runtime_context().get_node_id()
                resp["env"]["ray_actor_pid"] = self.where.get("pid", 0)
            if isinstance(resp.get("problem"), dict):
                resp["problem"]["path"] = original
            line = json.dumps(resp)
        return line, out.get("exit")


def _fail(message: str, fix: str) -> int:
    print(f"ray_eval: {message}; {fix}", file=sys.stderr, flush=True)
    return 3


def _worker_exit(out: Dict[str, Any]) -> int:
    rc = int(out.get("exit", 1))
    print(f"ray_eval: the worker on the Ray node exited with code {rc} without answering\n{out.get('stderr', '')}",
          file=sys.stderr, flush=True)
    return rc if rc != 0 else 1


def _connect(address: str) -> Any:
    why = _unreachable(address)
    if why:
        raise SystemExit(_fail(f"cannot connect to the Ray cluster at {address}: {why}",
                               "pass --ray-address HOST:PORT of a running head, or use --eval-executor local"))
    try:
        import ray
    except ImportError as e:
        raise SystemExit(_fail(f"Ray is not installed ({e})", "pip install ray, or use --eval-executor local"))
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - any failure to connect is reported, not raised
        raise SystemExit(_fail(f"cannot connect to the Ray cluster at {address}: {e}",
                               "pass --ray-address HOST:PORT of a running head, or use --eval-executor local"))
    return ray


def count_gpus(address: str) -> int:
    """Prints the cluster's GPU count (what `--gpus all` means with --eval-executor ray)."""
    ray = _connect(address)
    print(int(ray.cluster_resources().get("GPU", 0)), flush=True)
    return 0


def serve(address: str, worker_argv: Optional[List[str]], max_retries: int, start_timeout: float) -> int:
    # Protocol lines go to the original stdout; Ray's own notices go to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    ray = _connect(address)
    if ray.cluster_resources().get("GPU", 0) < 1:
        return _fail(f"the Ray cluster at {address} has no GPU",
                     "start GPU nodes with `ray start --address HEAD:PORT` on GPU hosts (Ray counts their GPUs), "
                     "or use --eval-executor local")
    env = {k: v for k, v in os.environ.items() if k.startswith("UCUTLASS_")}
    relay = Relay(ray, worker_argv, env, max_retries, start_timeout)
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        try:
            req = json.loads(raw)
            if not isinstance(req, dict):
                raise ValueError("not a JSON object")
        except ValueError as e:
            # Answered here, as the worker answers a malformed line: with an error, and going on.
            proto.write(json.dumps({"id": None, "status": "error", "error": f"bad request line ({e}): {raw[:200]}"}) + "\n")
            continue
        line, code = relay.handle(req)
        if line is not None:
            proto.write(line + "\n")
            proto.flush()
        if code is not None:
            return code
    return 0


def main(argv: List[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ucutlass_torch.ray_eval")
    ap.add_argument("--address", required=True, help="the Ray cluster: host:port of the head, ray://host:10001, "
                    "auto (the cluster running on this machine) or local (a Ray started for this process alone)")
    ap.add_argument("--count-gpus", action="store_true", help="print the cluster's GPU count and exit")
    ap.add_argument("--max-retries", type=int, default=2, help="new actors for one request when its actor is lost")
    ap.add_argument("--start-timeout", type=float, default=90.0, help="seconds to wait for a free GPU")
    ap.add_argument("--worker-argv", help="the worker command as a JSON list (tests); default: this Python's "
                    "`-m ucutlass_torch.worker`")
    a = ap.parse_args(argv)
    try:
        if a.count_gpus:
            return count_gpus(a.address)
        worker = json.loads(a.worker_argv) if a.worker_argv else None
        return serve(a.address, worker, a.max_retries, a.start_timeout)
    except SystemExit as e:
        return int(e.code or 0)


if __name__ == "__main__":
    sys.exit(main())
