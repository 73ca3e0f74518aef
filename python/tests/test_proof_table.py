"""proof_table: rows from RunRecords and twin baselines, and the Markdown it prints."""

import json

from ucutlass_torch import proof_table


def test_rows_and_markdown(tmp_path):
    set_dir = tmp_path / "set"
    res = tmp_path / "res"
    set_dir.mkdir()
    res.mkdir()
    (set_dir / "k.py").write_text('"""a problem"""\n')
    (set_dir / "k.a.ucut").write_text("# bf16 TN, bias\nucut 1\n")
    (set_dir / "k.b.ucut").write_text("# variant b\nucut 1\n")
    rec = {"status": "ok", "median_ms": 0.2, "eager_ms": 0.25, "speedup_eager": 1.25, "frac_sol": 0.8,
           "sol_source": "calibrated", "max_abs_err": 0.001, "config": "cfg", "gpu": "H200",
           "tool_commit": "abc", "timestamp": "t", "so_path": "/libs/gemm/k.a/k.so"}
    (res / "k.records.json").write_text(json.dumps([rec]))
    (res / "k.twin.json").write_text(json.dumps({"baselines": {"eager": {"timing": {"median_ms": 0.22}}}}))
    (res / "k.eval.err").write_text("ucutlass eval: error: worker died\n")
    rs = proof_table.rows(set_dir, res)
    assert [r["stem"] for r in rs] == ["k.a", "k.b"]
    assert rs[0]["twin_ms"] == 0.22 and abs(rs[0]["x_twin"] - 1.1) < 1e-9
    assert rs[1]["status"] == "not run" and "worker died" in rs[1]["note"]
    md = proof_table.markdown(rs)
    assert "| k.a | bf16 TN, bias | ok | 1.00e-03 | 0.2000 | 0.2500 | 1.25 | 0.2200 | 1.10 | 80.0 | cfg |" in md
    assert "GPU H200, tool commit abc" in md


def test_missing_set_is_an_error(tmp_path, capsys):
    assert proof_table.main([str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "no such proof set" in capsys.readouterr().err
