"""The worker protocol: JSON lines between the C++ client (src/eval/worker_client.h) and
``python -m ucutlass_torch.worker`` (one persistent worker per GPU).

Framing: one JSON object per line, UTF-8, on the worker's stdin (requests) and on the worker's
*original* stdout (responses). The worker moves file descriptor 1 to stderr at start-up, so
anything the problem file, PyTorch or a kernel prints lands on stderr and can never corrupt the
stream. Exactly one response per request, in order; the response echoes the request's ``id``.

Requests (``id``: any JSON value, echoed; ``cmd``: the command)::

  {"id": 1, "cmd": "ping"}
      -> {"id": 1, "status": "ok", "env": {gpu, sm_clock_mhz, driver, cuda, torch, python,
                                          device, l2_bytes, matmul_tf32, cudnn_tf32, pid}}
  {"id": 2, "cmd": "load_problem", "problem": "path/to/problem.py", "seed": 42}
      -> {"status": "ok", "problem": {name, path, source_sha256, doc, seed, [kept: true when the
                                      worker had it loaded from before, KEEP_ONE_BYTES],
                                      outputs: [{shape, dtype}], inputs: [{shape, dtype}],
                                      memory: {fits, keep_on, need_bytes, free_bytes, total_bytes,
                                               sizes: {inputs, outputs, params, forward_peak},
                                               message}}}
  {"id": 3, "cmd": "evaluate", "so": "k.so", "profile": "default", "trials": 5,
   "rescaled": true, "min_reps": 30, "target_s": 0.1, "timing": true, "scalars": null,
   "profile_stages": true}
      -> {"status": "ok", "result": {verdict, error, phase, kernel, correctness, timing,
                                     recheck, seconds, [stage_ms: [{stage, kind, config, ms}]]},
          "fatal": false}
     (``stage_ms``: an ok candidate of several stages whose library has ucut_run_timed; each
     stage's median milliseconds over worker.PROFILE_REPS runs, a profile beside the timing)
  {"id": 4, "cmd": "baseline", "modes": ["eager", "compile"], "cache_dir": "/path"|null,
   "cached_only": ["compile"]}
      -> {"status": "ok", "baselines": {"eager": {mode, cached, setup_s, timing}|{mode, error}, ...}}
     (``cached_only``: modes answered only from the cache, never measured: absent when not cached)
  {"id": 5, "cmd": "shutdown"}  -> {"status": "ok"}, then the worker exits 0.

``result.verdict`` is ``ok`` | ``mismatch`` | ``launch_error`` | ``rejected`` (the candidate's
outcome; ``rejected``: it wrote outside its outputs, the error says where; the client maps it onto
RunRecord.status and adds ``timeout`` and the speed-of-light ``rejected`` itself).
``phase`` says where it ended: ``load`` | ``memory`` | ``bind`` | ``correctness`` | ``timing`` |
``recheck`` | ``profile`` | ``done``. ``memory``: the problem's memory plan (memplan, made at load_problem) says
its evaluation cannot fit; the verdict is ``launch_error`` with the plan's message (the sizes and
the fix), nothing ran, and ``baseline`` answers ``status: error`` with the same message.
``fatal: true`` means the CUDA context is unusable (e.g. an illegal address): the worker exits
after replying and the client starts a new one.

A request the worker cannot serve (bad JSON, unknown cmd, no problem loaded, a problem file that
fails to load) gets ``{"status": "error", "error": "<message naming the fix>"}``; the worker keeps
running. Floats that are not finite are written as ``null``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, IO, Optional, Tuple

COMMANDS = ("ping", "load_problem", "evaluate", "baseline", "shutdown")
PROTOCOL_VERSION = 1


class RequestError(Exception):
    pass


def parse_request(line: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """(request, None) or (None, error message). The id is kept when the JSON parses."""
    try:
        req = json.loads(line)
    except ValueError as e:
        return None, f"request is not valid JSON ({e}); send one JSON object per line"
    if not isinstance(req, dict):
        return None, "request must be a JSON object with 'id' and 'cmd'"
    cmd = req.get("cmd")
    if cmd not in COMMANDS:
        from difflib import get_close_matches
        close = get_close_matches(str(cmd), COMMANDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(COMMANDS)}"
        return req, f"unknown cmd {cmd!r}{hint}"
    return req, None


def field(req: Dict[str, Any], name: str, kind: type, default: Any = None, required: bool = False) -> Any:
    if name not in req or req[name] is None:
        if required:
            raise RequestError(f"'{req.get('cmd')}' needs field '{name}'")
        return default
    value = req[name]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is int and isinstance(value, bool):
        raise RequestError(f"field '{name}' must be an integer")
    if not isinstance(value, kind):
        raise RequestError(f"field '{name}' must be {kind.__name__}, got {type(value).__name__}")
    return value


def jsonable(x: Any) -> Any:
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def encode(obj: Dict[str, Any]) -> str:
    return json.dumps(jsonable(obj), allow_nan=False, separators=(",", ":"))


def send(out: IO[str], obj: Dict[str, Any]) -> None:
    out.write(encode(obj) + "\n")
    out.flush()


def ok(req_id: Any, **fields: Any) -> Dict[str, Any]:
    return dict({"id": req_id, "status": "ok"}, **fields)


def error(req_id: Any, message: str) -> Dict[str, Any]:
    return {"id": req_id, "status": "error", "error": message}
