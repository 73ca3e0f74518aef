"""GPU check of the evaluator's memory plan (docs/eval-contract.md, "Memory"; CTest label `gpu`
through tests/gpu/run_eval_gpu_tests.sh): the elementwise problem of issue 25, 4096 x 393216 fp32
(6 GiB in, 6 GiB out), evaluated under the whole contract by the worker with a Python stand-in
kernel, the reference's outputs moving to the host as they are made (out of the candidate's
reach). It prints its peak (a line starting "memory:"). Skipped without CUDA."""

import json
import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import kernel
from ucutlass_torch.worker import Worker

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

ROWS, COLS = 4096, 393216
U = ROWS * COLS * 4  # 6 GiB
GiB = 2**30

PROBLEM = '''
"""ReLU over a 4096 x 393216 fp32 tensor (issue 25's elementwise problems: 6 GiB in and out)"""
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.rand(4096, 393216) - 0.5]

def get_init_inputs():
    return []
'''

DESC = {"abi": 1, "name": "relu_stand_in", "tensors": [
    {"name": "x", "role": "in", "dtype": "f32", "shape": [ROWS, COLS], "index": 0},
    {"name": "y", "role": "out", "dtype": "f32", "shape": [ROWS, COLS], "index": 0}]}


def relu_into(t, s):
    t[1].copy_(t[0]).clamp_(min=0)


@pytest.fixture(scope="module")
def problem_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("mem") / "relu_6gib.py"
    p.write_text(textwrap.dedent(PROBLEM))
    return str(p)


def evaluate(w):
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    r = w.evaluate(kernel.PyKernel(DESC, relu_into), min_reps=30)
    peak = torch.cuda.max_memory_allocated() - before
    return r, peak


def check_contract(r):
    assert r["verdict"] == "ok", r["error"]
    c = r["correctness"]
    kinds = [t["kind"] for t in c["trials"]]
    assert kinds.count("random") >= 5 and c["rescaled_trial"] == "kept"
    assert {t["order"] for t in c["trials"]} == {"reference-first", "candidate-first"}
    assert all(t["runs"] == 2 for t in c["trials"]) and c["deterministic"] and c["bitwise_repeatable"]
    assert c["recheck"]["passed"] and not c["degenerate"]
    assert r["timing"]["reps"] >= 30


def report(name, w, r, peak):
    mem = w.memory
    print(f"memory: {name}: peak {peak / GiB:.2f} GiB above the model, plan {mem.need_bytes / GiB:.2f} GiB "
          f"(keep_on {mem.keep_on}, {mem.free_bytes / GiB:.1f} of {mem.total_bytes / GiB:.1f} GiB free), "
          f"{r['seconds']['total']:.1f} s; " + json.dumps({"sizes": mem.to_json()["sizes"]}))


def test_the_6gib_elementwise_problem_is_evaluated_under_the_contract(problem_path):
    w = Worker("cuda")
    info = w.load(problem_path)
    mem = info["memory"]
    # 6 GiB of outputs: made again after the candidate instead of moved to the host and back
    assert mem["fits"] and mem["keep_on"] == "after", mem
    assert mem["sizes"]["inputs"] == U and mem["sizes"]["outputs"] == U
    r, peak = evaluate(w)
    report("reference outputs made after the candidate", w, r, peak)
    check_contract(r)
    # inputs and a clone, the candidate's buffer and the reference's output (or its forward run
    # again beside the candidate's buffer): 4 x 6 GiB
    assert peak <= mem["need_bytes"], (peak, mem["need_bytes"])
    assert peak <= 4 * U + GiB
