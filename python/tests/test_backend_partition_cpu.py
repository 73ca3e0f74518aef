"""The torch.compile backend on the CPU (backend.py, subgraph.py): a model with covered ops
(linear, gelu, layer_norm, add) around one the language does not cover (sort) is cut into two
covered subgraphs and the rest; each covered subgraph is written as a KernelBench problem file
and "searched" by a stubbed binary (it writes the report a kept kernel leaves), loaded through a
stand-in library that runs the problem file's own Model, and the compiled model equals eager.
A second backend on the same cache with a zero budget runs the same kernels without a search."""

import json
import os
import sys

import pytest
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from ucutlass_torch import backend, library_op, loader, subgraph, tool  # noqa: E402


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 32)
        self.ln = nn.LayerNorm(32)

    def forward(self, x):
        h = torch.nn.functional.gelu(self.fc(x))
        s = torch.sort(h, dim=-1).values          # not in the Problem IR's vocabulary
        return self.ln(s) + h


class FakeBinary:
    """Stands in for `ucutlass optimize`: records the problem, writes report.json and a best.so."""

    def __init__(self):
        self.calls = []

    def __call__(self, argv):
        assert argv[1] == "optimize"
        problem, out = argv[2], argv[argv.index("-o") + 1]
        self.calls.append(argv)
        stem = os.path.splitext(os.path.basename(problem))[0]
        os.makedirs(os.path.join(out, stem), exist_ok=True)
        with open(os.path.join(out, stem, "best.so"), "wb") as f:
            f.write(b"not a real library")
        report = {"schema": "ucutlass.optimize-report/1", "result": {"kind": "kernel", "text": "the kernel, 1.50x"},
                  "best": {"speedup": 1.5, "frac_sol": 0.6,
                           "worst_stage": {"stage": "s0", "kind": "gemm", "config": "g", "ms": 1.25, "floor_ms": 0.5,
                                           "share": 0.9}}}
        with open(os.path.join(out, stem, "report.json"), "w") as f:
            json.dump(report, f)
        return 0, "ok"


def stand_in_loader(so_path):
    """The library a search kept, as a stand-in: its describe document from the problem's spec,
    its launch the problem file's own Model with the weights it is given."""
    folder = os.path.dirname(so_path)
    stem = [f for f in os.listdir(folder) if f.startswith("g_") and f.endswith(".py")][0][:-3]
    spec = json.load(open(os.path.join(folder, stem + ".json")))
    ins = [dict(name=a["name"], role="in", dtype=a["dtype"], shape=a["shape"]) for a in spec["args"] if a["role"] == "input"]
    params = [dict(name=a["name"], role="param", dtype=a["dtype"], shape=a["shape"], binding=a["name"])
              for a in spec["args"] if a["role"] == "param"]
    outs = [dict(name=f"y{i}", role="out", dtype=o["dtype"], shape=o["shape"]) for i, o in enumerate(spec["outputs"])]
    desc = {"abi": 1, "name": stem, "program_hash": stem[2:], "tensors": ins + params + outs}
    made = []

    def launch(args):
        if not made:
            made.append(loader.load_problem(os.path.join(folder, stem + ".py")).Model())
        model = made[0]
        x = args[:len(ins)]
        with torch.no_grad():
            for p, v in zip(params, args[len(ins):len(ins) + len(params)]):
                getattr(model, p["name"]).copy_(v)
            got = model(*x)
        got = got if isinstance(got, tuple) else (got,)
        for o, g in zip(args[len(ins) + len(params):], got):
            o.copy_(g)
    return library_op.register(library_op.StandIn(desc, launch))


def make(tmp_path, budget=3, runner=None):
    return backend.Backend(tool.SearchOptions(budget=budget), cache_dir=str(tmp_path / "cache"), fallback="eager",
                           runner=runner, load_library=stand_in_loader)


def run(model, be, x):
    torch._dynamo.reset()
    with torch.no_grad():
        return torch.compile(model, backend=be, fullgraph=True)(x)


def test_partition_separates_covered_and_uncovered_ops(tmp_path):
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    fake = FakeBinary()
    be = make(tmp_path, runner=fake)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    parts = be.report.parts
    assert [p.ops for p in parts] == [["linear", "gelu"], ["layer_norm", "add"]]
    assert [p.status for p in parts] == ["kernel", "kernel"] and all(p.searched for p in parts)
    assert all(p.op.startswith("ucutlass::g_") for p in parts)
    assert any("'sort'" in why for why in be.report.uncovered), be.report.uncovered
    assert len(fake.calls) == 2
    argv = fake.calls[0]
    assert argv[argv.index("--budget") + 1] == "3" and "--profile" in argv and "--policy" in argv
    text = str(be.report)
    assert "2 running μCUTLASS kernels" in text and "1.50x over eager" in text
    # the kernel's stage most above its floor, from the search's report.json
    assert "most above its floor: s0 gemm 1.25 ms, floor 0.5 ms" in text, text


def test_the_problem_file_is_kernelbench_format_and_extracts(tmp_path):
    # The written problem loads as KernelBench does, its weights are the model's, and the
    # extractor turns it into Problem IR (the binary's first step).
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    run(m, make(tmp_path, runner=FakeBinary()), x)
    problems = sorted(p for p in (tmp_path / "cache").rglob("g_*.py"))
    assert len(problems) == 2
    first = [p for p in problems if "linear" in p.read_text()][0]
    lp = loader.load_problem(str(first))
    model = lp.Model(*lp.get_init_inputs())
    state = model.state_dict()
    assert len(state) == 2 and all(k.startswith("a") for k in state)
    assert {tuple(v.shape) for v in state.values()} == {(32, 16), (32,)}
    assert any(torch.equal(v, m.fc.weight.detach()) for v in state.values())
    (inp,) = lp.get_inputs()
    assert inp.shape == (4, 16)
    from ucutlass_torch.extract import extract
    doc = extract(str(first))
    assert [o["op"] for o in doc["ops"]][:2] == ["linear", "gelu"]


def test_the_problem_file_builds_on_the_device_it_is_built_for(tmp_path):
    # The worker builds Model() and get_inputs() under torch.device("cuda"), where PyTorch 2.11
    # refuses a Parameter over the CPU tensors torch.load returns ("Attempted to set the storage of
    # a tensor on device cuda:0 to a storage on different device cpu": every subgraph of run CK's
    # models failed to load). The weights must load onto the device in force; "meta" stands in
    # for it here (on the CPU the Parameter is not refused, but it stays on the CPU).
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    run(m, make(tmp_path, runner=FakeBinary()), x)
    first = [p for p in sorted((tmp_path / "cache").rglob("g_*.py")) if "linear" in p.read_text()][0]
    lp = loader.load_problem(str(first))
    with torch.device("meta"):
        model = lp.Model(*lp.get_init_inputs())
        inputs = lp.get_inputs()
    assert {p.device.type for p in model.parameters()} == {"meta"}
    assert all(t.device.type == "meta" for t in inputs)
    assert not first.with_suffix(".inputs.pt").exists()  # floating inputs only: none saved


def test_saved_inputs_are_read_without_the_weights(tmp_path):
    # A non-floating input (a mask) keeps its example in <stem>.inputs.pt, which get_inputs() reads
    # for every trial; the weights file is not read there. A graph with floating inputs only
    # writes no inputs file (Block's test above).
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(16, 16)

        def forward(self, x, mask):
            return torch.where(mask, self.fc(x), 0.0) * 2

    torch.manual_seed(0)
    x, mask = torch.randn(4, 16), torch.rand(4, 16) > 0.5
    torch._dynamo.reset()
    with torch.no_grad():
        torch.compile(Masked().eval(), backend=make(tmp_path, runner=FakeBinary()), fullgraph=True)(x, mask)
    (problem,) = (tmp_path / "cache").rglob("g_*.py")
    lp = loader.load_problem(str(problem))
    got_x, got_mask = lp.get_inputs()
    assert got_x.shape == x.shape and got_x.is_floating_point()
    assert torch.equal(got_mask, mask)
    text = problem.read_text()
    assert problem.with_suffix(".inputs.pt").exists() and "WEIGHTS" not in text.split("def get_inputs")[1]
    weights = torch.load(problem.with_suffix(".pt"))
    assert "inputs" not in weights and all(w.is_floating_point() for w in weights.values())


def test_a_known_graph_costs_no_search_and_zero_budget_only_reads(tmp_path):
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    run(m, make(tmp_path, runner=FakeBinary()), x)
    again = FakeBinary()
    be = make(tmp_path, budget=0, runner=again)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    assert again.calls == []
    assert [p.status for p in be.report.parts] == ["kernel", "kernel"]
    assert not any(p.searched for p in be.report.parts)
    # an empty cache with a zero budget: nothing is searched, PyTorch runs everything
    cold = FakeBinary()
    be = make(tmp_path / "other", budget=0, runner=cold)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    assert cold.calls == [] and [p.status for p in be.report.parts] == ["not searched", "not searched"]


def test_two_copies_of_a_block_share_one_key(tmp_path):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU()).eval()
    fake = FakeBinary()
    be = make(tmp_path, runner=fake)

    class Split(nn.Module):  # a graph break between the layers: two graphs, one subgraph text
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, x):
            y = self.m[1](self.m[0](x))
            y = torch.sort(y, dim=-1).values
            return self.m[3](self.m[2](y))
    x = torch.randn(4, 16)
    got = run(Split(), be, x)
    assert len(be.report.parts) == 2 and be.report.parts[0].key == be.report.parts[1].key
    assert len(fake.calls) == 1  # the second copy found the first one's result
    with torch.no_grad():
        want = m[3](m[2](torch.sort(m[1](m[0](x)), dim=-1).values))
    assert torch.allclose(got, want, atol=1e-5)


def test_a_search_without_a_kernel_keeps_pytorch(tmp_path):
    def no_kernel(argv):
        problem, out = argv[2], argv[argv.index("-o") + 1]
        stem = os.path.splitext(os.path.basename(problem))[0]
        os.makedirs(os.path.join(out, stem), exist_ok=True)
        json.dump({"result": {"kind": "fallback", "text": "slower than eager"}, "best": None},
                  open(os.path.join(out, stem, "report.json"), "w"))
        return 0, ""
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    be = make(tmp_path, runner=no_kernel)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x))
    assert [p.status for p in be.report.parts] == ["pytorch", "pytorch"]
    assert "slower than eager" in str(be.report)


@pytest.mark.parametrize("kind,kept", [("fallback", True), ("none", False), ("plan", False)])
def test_only_a_measured_outcome_is_remembered(tmp_path, kind, kept):
    # A fallback (nothing beat PyTorch) is an answer; a search that measured nothing (its problem
    # did not load on the GPU: "none") or a plan (no GPU) is not, and must not stand for good.
    def outcome(argv):
        problem, out = argv[2], argv[argv.index("-o") + 1]
        stem = os.path.splitext(os.path.basename(problem))[0]
        os.makedirs(os.path.join(out, stem), exist_ok=True)
        json.dump({"result": {"kind": kind, "text": kind}, "best": None}, open(os.path.join(out, stem, "report.json"), "w"))
        return 0, ""
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    run(m, make(tmp_path, runner=outcome), x)
    again = make(tmp_path, budget=0, runner=outcome)
    run(m, again, x)
    want = "pytorch" if kept else "not searched"
    assert [p.status for p in again.report.parts] == [want, want]


def test_training_graphs_go_to_the_fallback_whole(tmp_path):
    m, x = Block(), torch.randn(4, 16)
    fake = FakeBinary()
    be = make(tmp_path, runner=fake)
    torch._dynamo.reset()
    out = torch.compile(m, backend=be)(x)
    out.sum().backward()
    assert fake.calls == [] and be.report.parts == []


def test_registered_name_and_options(tmp_path):
    backend.register()
    backend.register()  # idempotent
    assert "ucutlass" in torch._dynamo.list_backends(exclude_tags=())
    with pytest.raises(ValueError, match="unknown ucutlass backend option"):
        backend.backend_from_options({"budjet": 1})
    be = backend.backend_from_options({"budget": 0, "profile": "kb-v01", "cache_dir": str(tmp_path), "fallback": "eager"})
    assert be.options.profile == "kb-v01" and not be.options.searches
    torch._dynamo.reset()
    m, x = Block().eval(), torch.randn(4, 16)
    with torch.no_grad():
        got = torch.compile(m, backend="ucutlass", options={"budget": 0, "cache_dir": str(tmp_path / "c"),
                                                             "fallback": "eager"})(x)
        assert torch.allclose(got, m(x))


def test_the_rest_compiles_with_inductor_after_the_graph_is_rewritten(tmp_path):
    # Dynamo's graph carries its inputs' sources on the placeholder nodes; Inductor's front end
    # (aot_autograd) insists on them once the graph module says it came from Dynamo. The partition
    # rewrites the graph: the rest must still compile (on the GPU machine's torch this failed with
    # "node l_x_ must have _dynamo_source attribute").
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    be = backend.Backend(tool.SearchOptions(budget=3), cache_dir=str(tmp_path / "cache"), fallback="inductor",
                         runner=FakeBinary(), load_library=stand_in_loader)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    assert [p.status for p in be.report.parts] == ["kernel", "kernel"]


def test_minutes_are_the_models_and_shared_out_among_the_subgraphs(tmp_path):
    # Block has two covered subgraphs: with minutes=10 the first search gets about 10 / 2 and the
    # second what is left (about 10, with the first taking no time here); a budget of 0 minutes
    # passes no --time-budget at all.
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    fake = FakeBinary()
    be = backend.Backend(tool.SearchOptions(budget=3, minutes=10), cache_dir=str(tmp_path / "cache"),
                         fallback="eager", runner=fake, load_library=stand_in_loader)
    run(m, be, x)
    given = [float(a[a.index("--time-budget") + 1]) for a in fake.calls]
    assert len(given) == 2
    assert 4.9 < given[0] <= 5.0 and 9.9 < given[1] <= 10.0, given
    fake2 = FakeBinary()
    run(m, make(tmp_path / "again", runner=fake2), x)
    assert all("--time-budget" not in a for a in fake2.calls)


class AddInPlace(nn.Module):
    """``add_`` (not in the vocabulary) changes the Linear's output that ``relu`` then reads."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        y = self.fc(x)
        y.add_(1.0)
        return torch.relu(y)


class Timer:
    """Stands in for the GPU timing of fallback="auto": fixed milliseconds by choice, each choice
    actually run once on the example inputs (so a choice that cannot run is seen)."""

    def __init__(self, ms):
        self.ms, self.asked = ms, []

    def __call__(self, label, fn, args):
        self.asked.append(label)
        backend.call_graph(fn, args)
        return self.ms.get(label)


def auto_backend(tmp_path, timer):
    return backend.Backend(tool.SearchOptions(budget=3), cache_dir=str(tmp_path / "cache"), fallback="auto",
                           runner=FakeBinary(), load_library=stand_in_loader, timer=timer)


@pytest.mark.parametrize("ms,taken", [
    ({"Inductor": 1.0, "eager": 2.0, "eager without its kernels": 3.0}, "Inductor"),
    ({"Inductor": 2.0, "eager": 1.0, "eager without its kernels": 3.0}, "eager"),
    ({"Inductor": 2.0, "eager": 3.0, "eager without its kernels": 1.0}, "eager without its kernels"),
])
def test_auto_runs_the_fastest_of_inductor_eager_and_the_graph_without_kernels(tmp_path, ms, taken):
    # The bf16 GPT block at batch 1 ran 0.58x eager through Inductor around no kernels (runs CZ,
    # DC): "auto" times the choices on the example inputs and keeps the fastest, and a graph
    # faster without its kernels runs without them, its parts reported as PyTorch.
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    timer = Timer(ms)
    be = auto_backend(tmp_path, timer)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    # two passes, the second in reverse order (a drift does not favour whichever ran last)
    assert timer.asked == ["Inductor", "eager", "eager without its kernels",
                           "eager without its kernels", "eager", "Inductor"]
    assert len(be.report.paths) == 1 and be.report.paths[0].startswith(f"graph 0: {taken} ("), be.report.paths
    assert "Inductor 1.000 ms" in be.report.paths[0] or "Inductor 2.000 ms" in be.report.paths[0]
    statuses = [p.status for p in be.report.parts]
    if taken == "eager without its kernels":
        assert statuses == ["pytorch", "pytorch"] and all("ran faster without it" in p.detail for p in be.report.parts)
        assert "0 running μCUTLASS kernels" in str(be.report)
    else:
        assert statuses == ["kernel", "kernel"]
    assert be.report.paths[0] in str(be.report) and be.report.to_json()["paths"] == be.report.paths


class DriftingTimer(Timer):
    """Each choice's time by label and pass: the first pass slower for whichever ran first."""

    def __call__(self, label, fn, args):
        self.asked.append(label)
        backend.call_graph(fn, args)
        return self.ms[label][self.asked.count(label) - 1]


def test_auto_keeps_each_choices_faster_pass(tmp_path):
    # Inductor timed first reads 3.0 ms (the host still warming up), 1.0 ms in the second pass;
    # eager 2.0 ms both times: the faster pass counts, and Inductor is taken.
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    timer = DriftingTimer({"Inductor": [3.0, 1.0], "eager": [2.0, 2.0], "eager without its kernels": [4.0, 4.0]})
    be = auto_backend(tmp_path, timer)
    run(m, be, x)
    assert be.report.paths[0].startswith("graph 0: Inductor (Inductor 1.000 ms, eager 2.000 ms"), be.report.paths


def no_kernel_runner(argv):
    problem, out = argv[2], argv[argv.index("-o") + 1]
    stem = os.path.splitext(os.path.basename(problem))[0]
    os.makedirs(os.path.join(out, stem), exist_ok=True)
    json.dump({"result": {"kind": "fallback", "text": "slower than eager"}, "best": None},
              open(os.path.join(out, stem, "report.json"), "w"))
    return 0, ""


@pytest.mark.parametrize("fallback", ["auto", "eager"])
def test_a_graph_without_kernels_runs_unpartitioned(tmp_path, fallback):
    # Every part kept PyTorch: what runs is the graph Dynamo gave (no fused_ submodules, whose
    # calls cost a launch-bound graph: the bf16 GPT block at batch 1, run DS), timed against
    # Inductor on it under "auto" (the graph without kernels is the same graph: not timed twice).
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    timer = Timer({"Inductor": 2.0, "eager": 1.0})
    be = backend.Backend(tool.SearchOptions(budget=3), cache_dir=str(tmp_path / "cache"), fallback=fallback,
                         runner=no_kernel_runner, load_library=stand_in_loader, timer=timer)
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    assert [p.status for p in be.report.parts] == ["pytorch", "pytorch"]
    seen = []
    real = backend.Backend._rest

    def spy(self, gm, *a, **k):
        seen.append([name for name, _ in gm.named_children()])
        return real(self, gm, *a, **k)

    torch._dynamo.reset()
    be2 = backend.Backend(tool.SearchOptions(budget=3), cache_dir=str(tmp_path / "cache"), fallback=fallback,
                          runner=no_kernel_runner, load_library=stand_in_loader, timer=timer)
    backend.Backend._rest = spy
    try:
        run(m, be2, x)
    finally:
        backend.Backend._rest = real
    assert seen and not any(n.startswith("fused_") for n in seen[0]), seen
    if fallback == "auto":
        assert timer.asked[:4] == ["Inductor", "eager", "eager", "Inductor"]
        assert be.report.paths == ["graph 0: eager (Inductor 2.000 ms, eager 1.000 ms)"]


def test_auto_without_gpu_inputs_is_inductor_and_a_graph_that_mutates_is_not_timed(tmp_path):
    torch.manual_seed(0)
    m, x = Block().eval(), torch.randn(4, 16)
    be = auto_backend(tmp_path, backend.cuda_timer)  # CPU tensors: nothing is timed
    got = run(m, be, x)
    with torch.no_grad():
        assert torch.allclose(got, m(x), atol=1e-5)
    assert be.report.paths == ["graph 0: Inductor (not timed: no GPU inputs)"]

    timer = Timer({"Inductor": 2.0, "eager": 1.0})
    be2 = auto_backend(tmp_path / "m", timer)
    m2 = AddInPlace().eval()
    got = run(m2, be2, x)
    with torch.no_grad():
        assert torch.allclose(got, m2(x), atol=1e-5)
    assert timer.asked == []
    assert len(be2.report.paths) == 1 and "not timed" in be2.report.paths[0] and "add_" in be2.report.paths[0]


def test_fallback_names_are_checked():
    with pytest.raises(ValueError, match="auto, inductor, eager"):
        backend.Backend(fallback="cudagraphs")
    assert backend.backend_from_options({}).fallback == "auto"
    assert backend.rerun_safe(torch.fx.symbolic_trace(lambda x: torch.nn.functional.dropout(x, 0.5))) is not None
    assert backend.rerun_safe(torch.fx.symbolic_trace(lambda x: torch.relu(x) * 2)) is None


class IaddThenRelu(AddInPlace):
    """``h += 1`` read only through its result: safe out of place, one subgraph."""

    def forward(self, x):
        h = self.fc(x)
        h += 1.0
        return torch.relu(h)


class StaleAlias(AddInPlace):
    """``g`` is ``h`` before ``h += 1`` and is read after it: it must see the change."""

    def forward(self, x):
        h = self.fc(x)
        g = h
        h += 1.0
        return torch.relu(g) * 2 + h


class ReluInputInPlace(AddInPlace):
    """An in-place ReLU of the graph's own input: the caller's tensor changes."""

    def forward(self, x):
        torch.nn.functional.relu(x, inplace=True)
        return self.fc(x)


@pytest.mark.parametrize("cls,parts", [
    (AddInPlace, [["linear"]]),
    (IaddThenRelu, [["linear", "add", "relu"]]),
    (StaleAlias, [["linear"], ["mul"]]),
    (ReluInputInPlace, []),
])
def test_in_place_changes_keep_pytorchs_order(tmp_path, cls, parts):
    # A covered subgraph computes out of place. Before mutation_hazards, AddInPlace's Linear and
    # ReLU were one subgraph and its add_ ran after them: the result lacked the +1.
    torch.manual_seed(0)
    m = cls().eval()
    x = torch.randn(4, 16)
    x_eager, x_ours = x.clone(), x.clone()
    be = make(tmp_path, runner=FakeBinary())
    got = run(m, be, x_ours)
    with torch.no_grad():
        want = m(x_eager)
    assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()
    assert torch.equal(x_ours, x_eager)  # the input changed as PyTorch changes it (or not at all)
    assert sorted(p.ops for p in be.report.parts) == parts, str(be.report)
    if parts != [["linear", "add", "relu"]]:
        assert any("changed in place" in why for why in be.report.uncovered), be.report.uncovered


class ResidualBlock(nn.Module):
    """ResNet's basic block: ReLU(inplace=True) and ``out += x``, each on a value nothing reads
    again: both safe out of place, so the whole block stays one subgraph."""

    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu(self.b1(self.c1(x)))
        out = self.b2(self.c2(out))
        out += x
        return self.relu(out)


def test_the_usual_in_place_idioms_stay_covered(tmp_path):
    torch.manual_seed(0)
    m, x = ResidualBlock().eval(), torch.randn(2, 8, 16, 16)
    be = make(tmp_path, runner=FakeBinary())
    got = run(m, be, x.clone())
    with torch.no_grad():
        assert torch.allclose(got, m(x.clone()), atol=1e-5)
    assert [p.ops for p in be.report.parts] == [["conv2d", "batch_norm", "relu", "conv2d", "batch_norm", "add", "relu"]]
    assert not any("in place" in why for why in be.report.uncovered)


def test_mutates_knows_methods_functions_overloads_and_inplace_flags():
    g = torch.fx.Graph()
    x = g.placeholder("x")
    calls = [g.call_method("add_", (x, 1.0)), g.call_function(torch.relu_, (x,)),
             g.call_function(torch.ops.aten.add_.Tensor, (x, x)),
             g.call_function(torch.nn.functional.relu, (x,), {"inplace": True}),
             g.call_function(torch.relu, (x,)), g.call_method("detach_", (x,)), g.call_method("__add__", (x, x))]
    g.output(calls[-1])
    assert [subgraph.mutates(n) for n in calls] == [True, True, True, True, False, False, False]
