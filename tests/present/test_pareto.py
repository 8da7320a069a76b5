"""Quality against cost: the Pareto chart's points are the manifest's numbers and the
leaderboard's means and CIs; the front; run metadata from the manifest and from ir_metadata
beside a run."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from analysis.core.errors import InputError
from analysis.io.bundle import load_dataset, load_model_run, read_manifest
from analysis.io.groups import read_ir_metadata, run_metadata
from analysis.present.leaderboard import leaderboard
from analysis.present.pareto import cost_keys, pareto_figure, pareto_front, pareto_points
from analysis.stats.groups import group_members
from analysis.stats.perquery import per_query_table

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo"


@pytest.fixture(scope="module")
def prime() -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """The demo's stark-prime leaderboard (mrr), its run metadata and per-query table."""
    spec = read_manifest(DEMO).datasets["stark-prime"]
    ds = load_dataset(spec)
    runs = {m: load_model_run(spec, m) for m in spec.runs}
    table, _ = per_query_table(ds.queries, ds.qrels, runs, dataset=spec.name,
                               headline=spec.metrics, groups=spec.groups)  # fmt: skip
    board = leaderboard(table, ["mrr"], models=spec.models, n_resamples=2000)
    return board, run_metadata(spec.runs, spec.run_metadata, spec.groups), table


def test_pareto_points_equal_the_manifests_numbers(prime) -> None:
    board, meta, table = prime
    with (DEMO / "bundle.toml").open("rb") as f:
        manifest = tomllib.load(f)["datasets"]["stark-prime"]["run_metadata"]
    members = dict.fromkeys(group_members(table)["dense"][1], "dense")
    points = pareto_points(board, meta, "mrr", "latency_ms", members=members).set_index("model")
    for model, numbers in manifest.items():
        assert points.loc[model, "cost"] == numbers["latency_ms"]
    seeds = [manifest[f"dense-s{i}"]["latency_ms"] for i in (1, 2, 3)]
    assert points.loc["dense", "cost"] == pytest.approx(np.mean(seeds))  # the seeds' mean
    means = board.set_index("model")
    for model in points.index:
        assert points.loc[model, "value"] == means.loc[model, "mrr"]
        assert points.loc[model, "ci_low"] == means.loc[model, "mrr ci_low"]
        assert points.loc[model, "ci_high"] == means.loc[model, "mrr ci_high"]
    assert points.loc["dense-s1", "member_of"] == "dense"
    assert not points.loc[["dense-s1", "dense-s2", "dense-s3"], "front"].any()
    # bm25 is the cheapest; bm25-kb-propagation the best
    assert points.loc[["bm25", "bm25-kb-propagation"], "front"].all()
    assert not points.loc["char-ngram-tfidf", "front"]  # slower and worse than bm25


def test_the_figure_draws_the_points(prime) -> None:
    board, meta, _ = prime
    points = pareto_points(board, meta, "mrr", "index_mb")
    assert "bm25-kb-propagation" not in set(points["model"])  # no index_mb in the manifest
    figure = json.loads(pareto_figure(points, "mrr", "index_mb").to_json())
    traces = [t for t in figure["data"] if t["name"] != "Pareto front"]
    drawn = {t["name"]: (t["x"][0], t["y"][0]) for t in traces}
    for row in points.to_dict("records"):
        assert drawn[row["model"]] == (row["cost"], row["value"])
    assert "index_mb (lower is better)" in figure["layout"]["xaxis"]["title"]["text"]


def _step_corners(line) -> list[tuple[float, float]]:
    """The corners plotly draws between the points of a step line (``hv``: x first)."""
    xs, ys = list(line.x), list(line.y)
    horizontal_first = line.line.shape == "hv"
    return [(xs[i + 1], ys[i]) if horizontal_first else (xs[i], ys[i + 1])
            for i in range(len(xs) - 1)]  # fmt: skip


@pytest.mark.parametrize("lower", [True, False])
def test_the_front_line_bends_through_dominated_corners(lower: bool) -> None:
    points = pd.DataFrame({
        "model": ["a", "b", "c"], "kind": "run", "member_of": None,
        "cost": [10.0, 50.0, 100.0], "value": [0.3, 0.5, 0.7] if lower else [0.7, 0.5, 0.3],
        "ci_low": 0.0, "ci_high": 1.0, "front": True,
    })  # fmt: skip
    figure = pareto_figure(points, "mrr", "qps", lower_is_better=lower)
    line = next(t for t in figure.data if t.name == "Pareto front")
    sign = 1.0 if lower else -1.0
    for x, y in _step_corners(line):  # each corner is reached by a point: no better one drawn
        assert any(
            sign * c <= sign * x and v >= y
            for c, v in zip(points["cost"], points["value"], strict=True)
        )


def test_pareto_front_by_hand() -> None:
    cost = np.array([1.0, 2.0, 3.0, 2.0, 1.0])
    value = np.array([0.2, 0.5, 0.4, 0.5, 0.1])
    assert pareto_front(cost, value).tolist() == [True, True, False, True, False]
    assert pareto_front(cost, value, lower_is_better=False).tolist() == [
        False, True, True, True, False]  # fmt: skip


def test_cost_keys_need_two_models() -> None:
    meta = {"a": {"latency_ms": 1, "cost": 2, "zeta": 1}, "b": {"latency_ms": 2, "zeta": 3},
            "c": {"alpha": 1}}  # fmt: skip
    assert cost_keys(meta) == ["latency_ms", "zeta"]


IR_METADATA = """\
# ir_metadata.start
# schema-version: 0.1
# run-version: 1.0
# tag: bm25-run
# platform:
#   hardware:
#     cpu:
#       number of cores: 16
#     ram: 32 GB
# method:
#   automatic: true
#   retrieval:
#   - name: bm25
#     k1: 0.9
#     b: 0.4
# ir_metadata.end
"""


def test_ir_metadata_header_and_file_beside_a_run(tmp_path: Path) -> None:
    run = tmp_path / "bm25.run"
    run.write_text(IR_METADATA + "q1 Q0 d1 1 2.0 bm25\n")
    (tmp_path / "bm25.yaml").write_text("ir_metadata.start\nefficiency:\n  latency_ms: 4.5\n"
                                        "ir_metadata.end\n")  # fmt: skip
    found = run_metadata({"bm25": run}, {"bm25": {"cost": 0.2}}, {})["bm25"]
    assert found == {
        "platform.hardware.cpu.number of cores": 16.0,
        "platform.hardware.ram (GB)": 32.0,
        "method.retrieval.bm25.k1": 0.9,
        "method.retrieval.bm25.b": 0.4,
        "efficiency.latency_ms": 4.5,
        "cost": 0.2,
    }
    # the manifest wins over ir_metadata for the same key
    again = run_metadata({"bm25": run}, {"bm25": {"efficiency.latency_ms": 1.0}}, {})["bm25"]
    assert again["efficiency.latency_ms"] == 1.0
    assert read_ir_metadata("q1 Q0 d1 1 2.0 x\n", run) == {}


def test_model_names_that_are_no_file_name_have_no_sidecar(tmp_path: Path) -> None:
    """``<model>.yaml`` is looked up only when the model name is one file name: a name over 255
    bytes (a manifest key may be any text) does not fail the bundle, and ``../x`` or ``a/b``
    does not read a file outside the run's folder."""
    runs = tmp_path / "runs"
    (runs / "a").mkdir(parents=True)
    run = runs / "r.run"
    run.write_text("q1 Q0 d1 1 2.0 x\n")
    for outside in (tmp_path / "x.yaml", runs / "a" / "b.yaml"):
        outside.write_text("ir_metadata.start\ncost: 9\nir_metadata.end\n")
    assert run_metadata({"W" * 300: run, "../x": run, "a/b": run}, {}, {}) == {}


def test_bad_ir_metadata_is_one_line_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        read_ir_metadata("# ir_metadata.start\n# a: [1, 2\n# ir_metadata.end\n", tmp_path / "x")
    assert "ir_metadata is not valid YAML" in str(err.value)
    assert str(tmp_path / "x") in str(err.value)
