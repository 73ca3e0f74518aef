"""bench/python/run.py --record-problems: the problem files the torch.compile backend writes for a
model's subgraphs land in the folder (with their weights), nothing searched, so a zoo of the
models' openings can be built on a machine without a GPU (bench/python/README.md)."""

import glob
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def test_record_problems_writes_each_subgraphs_problem_file(tmp_path):
    rec = tmp_path / "problems"
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "python", "run.py"), "--out", str(tmp_path / "out"),
                          "--device", "cpu", "--tiny", "--configs", "mlp:fp32:1", "--record-problems", str(rec)],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    files = sorted(glob.glob(str(rec / "g_*.py")))
    assert files, out.stdout[-2000:]
    for f in files:
        text = open(f).read()
        assert "class Model" in text and "def get_inputs" in text
        assert os.path.exists(f[:-3] + ".pt")  # its weights beside it
    assert not (tmp_path / "out" / "results.jsonl").exists()  # nothing timed
