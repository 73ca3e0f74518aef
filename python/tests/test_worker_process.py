"""The worker as a process: JSON lines on stdin/stdout, one response per request in order, errors
as responses (the worker keeps running), a problem that prints to stdout cannot corrupt the stream."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

PROBLEM = '''
import torch
import torch.nn as nn
print("noise from the problem file on stdout")

class Model(nn.Module):
    def forward(self, x):
        print("noise from forward")
        return torch.relu(x)

def get_inputs():
    return [torch.rand(16, 16)]

def get_init_inputs():
    return []
'''


def run_worker(requests, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, ".."), UCUTLASS_WORKER_DEVICE="cpu")
    text = "".join(json.dumps(r) + "\n" if isinstance(r, dict) else r for r in requests)
    p = subprocess.run([sys.executable, "-m", "ucutlass_torch.worker"], input=text, capture_output=True,
                       text=True, env=env, timeout=300)
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    return p, lines


def test_protocol_round_trip(tmp_path):
    prob = tmp_path / "relu.py"
    prob.write_text(PROBLEM)
    p, resp = run_worker([
        {"id": 1, "cmd": "ping"},
        "this is not json\n",
        {"id": 2, "cmd": "evaluate", "so": "x.so"},
        {"id": 3, "cmd": "lod_problem"},
        {"id": 4, "cmd": "load_problem", "problem": str(tmp_path / "missing.py")},
        {"id": 5, "cmd": "load_problem", "problem": str(prob)},
        {"id": 6, "cmd": "evaluate", "so": str(tmp_path / "none.so")},
        {"id": 7, "cmd": "evaluate"},
        {"id": 8, "cmd": "baseline", "modes": ["eager"], "min_reps": 30},
        {"id": 9, "cmd": "baseline", "modes": ["fast"]},
        {"id": 10, "cmd": "shutdown"},
        {"id": 11, "cmd": "ping"},
    ], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "noise from the problem file" in p.stderr  # moved off the protocol stream
    ids = [r.get("id") for r in resp]
    assert ids == [1, None, 2, 3, 4, 5, 6, 7, 8, 9, 10]  # nothing after shutdown
    by = {r.get("id"): r for r in resp}
    assert by[1]["status"] == "ok" and by[1]["env"]["torch"] and by[1]["env"]["matmul_tf32"] is False
    assert resp[1]["status"] == "error" and "not valid JSON" in resp[1]["error"]
    assert by[2]["status"] == "error" and "no problem loaded" in by[2]["error"]
    assert by[3]["status"] == "error" and "load_problem" in by[3]["error"]
    assert by[4]["status"] == "error" and "missing.py" in by[4]["error"]
    assert by[5]["status"] == "ok" and by[5]["problem"]["outputs"] == [{"shape": [16, 16], "dtype": "f32"}]
    assert len(by[5]["problem"]["source_sha256"]) == 64
    assert by[6]["status"] == "ok" and by[6]["result"]["verdict"] == "launch_error"
    assert "no such kernel library" in by[6]["result"]["error"] and by[6]["fatal"] is False
    assert by[7]["status"] == "error" and "'so'" in by[7]["error"]
    eager = by[8]["baselines"]["eager"]
    assert eager["timing"]["reps"] >= 30 and eager["timing"]["median_ms"] > 0
    # Timed twice; the faster median is the one kept.
    assert len(eager["medians_ms"]) == 2 and eager["timing"]["median_ms"] == min(eager["medians_ms"])
    assert by[9]["status"] == "error" and "unknown baseline" in by[9]["error"]
