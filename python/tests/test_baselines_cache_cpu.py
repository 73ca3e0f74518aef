"""baselines.cached: a baseline a run put off (a suite measures torch.compile's after a problem's
first attempt) is answered from the cache when an earlier run measured it, and never measured."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import baselines  # noqa: E402


def test_a_cached_baseline_is_answered_and_a_missing_one_is_not(tmp_path):
    key = baselines.cache_key("sha", "NVIDIA H200", "compile")
    assert baselines.cached("sha", "NVIDIA H200", "compile", str(tmp_path)) is None
    baselines.cache_store(str(tmp_path), key, {"mode": "compile", "cached": False, "timing": {"median_ms": 1.5}})
    hit = baselines.cached("sha", "NVIDIA H200", "compile", str(tmp_path))
    assert hit["cached"] is True and hit["timing"]["median_ms"] == 1.5
    # another GPU, another mode or no cache folder: nothing
    assert baselines.cached("sha", "NVIDIA H100 80GB HBM3", "compile", str(tmp_path)) is None
    assert baselines.cached("sha", "NVIDIA H200", "max-autotune", str(tmp_path)) is None
    assert baselines.cached("sha", "NVIDIA H200", "compile", None) is None


def test_a_baseline_timed_beside_other_processes_is_not_cached(tmp_path):
    import torch
    model = torch.nn.ReLU()
    inputs = [torch.rand(64, 64)]
    kw = dict(min_reps=3, target_s=0.001)
    r = baselines.measure(model, inputs, "eager", torch.device("cpu"), "sha", "gpu", str(tmp_path),
                          others=lambda: 2, **kw)
    assert r["others_on_gpu"] == 2 and "2 other process(es) used the GPU: not cached" in r["note"]
    assert baselines.cached("sha", "gpu", "eager", str(tmp_path)) is None
    r = baselines.measure(model, inputs, "eager", torch.device("cpu"), "sha", "gpu", str(tmp_path),
                          others=lambda: 0, **kw)
    assert "others_on_gpu" not in r and baselines.cached("sha", "gpu", "eager", str(tmp_path)) is not None
