"""Disagreement without qrels: Jaccard@k, RBO_ext and τ_AP on hand-made lists, against
straightforward implementations written here from the papers' definitions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analysis.stats.disagree import (
    MAX_K,
    disagreement,
    jaccard,
    most_different,
    rbo_ext,
    tau_ap,
)
from tests.helpers import run_main


def _matrix(lists: list[list[int]], k: int) -> np.ndarray:
    out = np.full((len(lists), k), -1, dtype=np.int64)
    for i, items in enumerate(lists):
        out[i, : len(items)] = items
    return out


def _rbo_reference(s: list[int], t: list[int], p: float, depth: int = 5000) -> float:
    """RBO_ext as the infinite sum (1-p) Σ_d A_d p^(d-1) of Webber et al. (2010), with the
    extrapolation of §4.3: the shorter list's unseen items agree at its rate X_s/s, and the
    agreement at the longer list's depth l holds below it. Summed term by term to ``depth``."""
    if len(s) > len(t):
        s, t = t, s
    sl, ll = len(s), len(t)

    def overlap(d: int) -> int:
        return len(set(s[:d]) & set(t[:d]))

    x_s = overlap(sl)
    total = 0.0
    for d in range(1, depth + 1):
        dd = min(d, ll)
        x = overlap(dd) + (x_s * (dd - sl) / sl if dd > sl else 0.0)
        total += (x / dd) * p ** (d - 1)
    return (1 - p) * total


def _tau_ap_reference(x: list[str], ref: list[str]) -> float:
    """τ_AP(x | ref) of Yilmaz et al. (2008) by its definition, over the common items."""
    common = [item for item in ref if item in x]
    n = len(common)
    pos = {item: x.index(item) for item in common}
    total = 0.0
    for i in range(1, n):
        correct = sum(pos[common[j]] < pos[common[i]] for j in range(i))
        total += correct / i
    return 2.0 / (n - 1) * total - 1.0


def test_identical_and_disjoint_lists():
    a = _matrix([[1, 2, 3, 4], [1, 2, 3, 4]], 4)
    b = _matrix([[1, 2, 3, 4], [5, 6, 7, 8]], 4)
    assert rbo_ext(a, b).tolist() == pytest.approx([1.0, 0.0])
    assert jaccard(a, b).tolist() == [1.0, 0.0]
    tau = tau_ap(a, b)
    assert tau[0] == pytest.approx(1.0)
    assert math.isnan(tau[1])  # no shared doc: order cannot be compared


def _random_lists(seed: int, n: int, longest: int, universe: int) -> tuple[list, list]:
    """``n`` pairs of lists of 1 to ``longest`` distinct codes below ``universe``."""
    rng = np.random.default_rng(seed)
    lists_a, lists_b = [], []
    for _ in range(n):
        la, lb = rng.integers(1, longest + 1, size=2)
        lists_a.append(rng.choice(universe, size=la, replace=False).tolist())
        lists_b.append(rng.choice(universe, size=lb, replace=False).tolist())
    return lists_a, lists_b


def test_rbo_matches_the_term_by_term_sum_on_random_lists():
    lists_a, lists_b = _random_lists(3, 200, 10, 15)
    for p in (0.5, 0.9, 0.98):
        got = rbo_ext(_matrix(lists_a, 10), _matrix(lists_b, 10), p)
        want = [_rbo_reference(s, t, p) for s, t in zip(lists_a, lists_b, strict=True)]
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
        # symmetric in its arguments
        np.testing.assert_allclose(rbo_ext(_matrix(lists_b, 10), _matrix(lists_a, 10), p), got)


def test_rbo_published_properties():
    # eq. 30 for even lists: one swap at the top costs more than one at the bottom
    top = rbo_ext(_matrix([[1, 2, 3, 4, 5]], 5), _matrix([[2, 1, 3, 4, 5]], 5))[0]
    bottom = rbo_ext(_matrix([[1, 2, 3, 4, 5]], 5), _matrix([[1, 2, 3, 5, 4]], 5))[0]
    assert top < bottom < 1.0
    # published example (RBO_ext of the rankmeasures README, after R. Agarwal's RBO.py):
    # [1,2,3,4,5] vs [2,3,4,1,5], p = 0.9 -> 0.828 (X = 0, 1, 2, 4, 5: exactly 0.828)
    got = rbo_ext(_matrix([[1, 2, 3, 4, 5]], 5), _matrix([[2, 3, 4, 1, 5]], 5), 0.9)[0]
    assert got == pytest.approx(0.828, abs=1e-12)
    # hand value, k = 2, p = 0.9, lists [1,2] vs [2,1]: X_1 = 0, X_2 = 2
    # (1-p)/p * (0/1 * p + 2/2 * p^2) + 2/2 * p^2 = 0.1 * 0.9 + 0.81 = 0.9
    assert rbo_ext(_matrix([[1, 2]], 2), _matrix([[2, 1]], 2))[0] == pytest.approx(0.9)
    # a prefix of an identical list (uneven lengths) extrapolates to full agreement
    assert rbo_ext(_matrix([[1, 2, 3]], 6), _matrix([[1, 2, 3, 4, 5, 6]], 6))[0] == pytest.approx(
        1.0
    )
    with pytest.raises(ValueError, match="p must"):
        rbo_ext(_matrix([[1]], 1), _matrix([[1]], 1), p=1.0)


def test_tau_ap_known_values_and_symmetry():
    ref = ["a", "b", "c"]
    # Yilmaz et al.: a swap at the top is penalised more than one at the bottom
    assert _tau_ap_reference(["b", "a", "c"], ref) == pytest.approx(0.0)
    assert _tau_ap_reference(["a", "c", "b"], ref) == pytest.approx(0.5)
    codes = {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}
    a = _matrix([[0, 1, 2], [0, 1, 2], [0, 1, 2]], 3)
    b = _matrix([[1, 0, 2], [0, 2, 1], [2, 1, 0]], 3)
    got = tau_ap(a, b)
    # symmetric mean of both directions; the reversed list gives -1
    want0 = (_tau_ap_reference(["b", "a", "c"], ref) + _tau_ap_reference(ref, ["b", "a", "c"])) / 2
    assert got[0] == pytest.approx(want0)
    assert got[2] == pytest.approx(-1.0)
    np.testing.assert_allclose(tau_ap(b, a), got)
    # random lists with partial overlap: against the definition over the common items
    rng = np.random.default_rng(7)
    names = list(codes)
    for _ in range(100):
        la, lb = rng.integers(2, 6, size=2)
        xa = rng.choice(5, size=la, replace=False).tolist()
        xb = rng.choice(5, size=lb, replace=False).tolist()
        value = tau_ap(_matrix([xa], 5), _matrix([xb], 5))[0]
        na, nb = [names[i] for i in xa], [names[i] for i in xb]
        if len(set(xa) & set(xb)) < 2:
            assert math.isnan(value)
        else:
            want = (_tau_ap_reference(na, nb) + _tau_ap_reference(nb, na)) / 2
            assert value == pytest.approx(want)


def _run(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])


def test_disagreement_per_query_and_most_different():
    run_a = _run(
        [("1", "x", 3), ("1", "y", 2), ("1", "z", 1), ("2", "x", 2), ("2", "y", 1), ("3", "q", 1)]
    )
    run_b = _run([("1", "x", 3), ("1", "y", 2), ("1", "z", 1), ("2", "y", 2), ("2", "w", 1)])
    run_b = pd.concat([run_b, _run([("4", "x", 1)])], ignore_index=True)
    table = disagreement(run_a, run_b, k=2)
    assert list(table.columns) == ["query_id", "jaccard@2", "rbo", "tau_ap"]
    assert table["query_id"].tolist() == ["1", "2", "3", "4"]
    by = table.set_index("query_id")
    assert by.loc["1", "jaccard@2"] == 1.0
    assert by.loc["1", "rbo"] == pytest.approx(1.0)
    assert by.loc["2", "jaccard@2"] == pytest.approx(1 / 3)
    assert by.loc["3", "rbo"] == 0.0
    assert by.loc["4", "rbo"] == 0.0
    order = most_different(table)["query_id"].tolist()
    assert order[-1] == "1"
    assert set(order[:2]) == {"3", "4"}
    assert len(most_different(table, 2)) == 2


def test_cli_writes_the_table_and_rejects_bad_input(tmp_path):
    a, b, out = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "out.csv"
    a.write_text("1 Q0 x 1 3.0 A\n1 Q0 y 2 2.0 A\n2 Q0 x 1 1.0 A\n")
    b.write_text("1 Q0 y 1 3.0 B\n1 Q0 x 2 2.0 B\n2 Q0 z 1 1.0 B\n")
    cmd = ["disagree", "--run", str(a), "--run", str(b)]
    done = run_main(*cmd, "--k", "5", "--out", str(out))
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(out, dtype={"query_id": str})
    assert list(table.columns) == ["query_id", "jaccard@5", "rbo", "tau_ap"]
    assert set(table["query_id"]) == {"1", "2"}
    assert table.set_index("query_id").loc["2", "jaccard@5"] == 0.0

    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 x 1 nan A\n")
    out2 = tmp_path / "out2.csv"
    done = run_main(*cmd[:-2], str(a), "--run", str(bad), "--out", str(out2))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("error: ")
    assert "Traceback" not in done.stderr
    assert not out2.exists()
    one = run_main(*cmd[:-2], str(a), "--out", str(out2))
    assert one.returncode == 2
    assert one.stderr.startswith("error: ")
    badp = run_main(*cmd, "--p", "1.5", "--out", str(out2))
    assert badp.returncode == 2
    assert "--p" in badp.stderr


def _random_run(rng: np.random.Generator, n_queries: int, longest: int) -> pd.DataFrame:
    """Lists of 1 to ``longest`` documents out of 3 x longest, distinct scores."""
    rows = []
    for q in range(n_queries):
        n = int(rng.integers(1, longest + 1))
        for rank, doc in enumerate(rng.choice(3 * longest, size=n, replace=False)):
            rows.append((f"q{q}", f"d{doc}", float(n - rank)))
    return _run(rows)


def test_tau_ap_of_long_random_lists_matches_the_definition():
    """Lists up to 60 documents (several merge levels), partial overlap, ragged lengths."""
    lists_a, lists_b = _random_lists(11, 40, 60, 90)
    got = tau_ap(_matrix(lists_a, 60), _matrix(lists_b, 60))
    for value, xa, xb in zip(got, lists_a, lists_b, strict=True):
        if len(set(xa) & set(xb)) < 2:
            assert math.isnan(value)
        else:
            want = (_tau_ap_reference(xa, xb) + _tau_ap_reference(xb, xa)) / 2
            assert value == pytest.approx(want, abs=1e-12)


def test_k_beyond_the_longest_list_gives_the_values_of_the_whole_lists():
    rng = np.random.default_rng(5)
    run_a, run_b = _random_run(rng, 30, 12), _random_run(rng, 30, 12)
    whole = disagreement(run_a, run_b, k=12)
    for k in (13, 3000, MAX_K):
        beyond = disagreement(run_a, run_b, k=k)
        assert list(beyond.columns) == ["query_id", f"jaccard@{k}", "rbo", "tau_ap"]
        np.testing.assert_array_equal(beyond.iloc[:, 1:].to_numpy(), whole.iloc[:, 1:].to_numpy())
    with pytest.raises(ValueError, match=f"from 1 to {MAX_K}"):
        disagreement(run_a, run_b, k=MAX_K + 1)


def test_memory_grows_with_queries_times_k_not_k_squared():
    """The largest k on 20 queries of 3,000 documents: the peak of the Python heap (numpy's
    arrays included) stays within 400 bytes per cell of the (queries x k) matrix; comparing
    every pair of positions took about 650 per cell here (3,000 x 3,000 booleans per query),
    and without the cap on k, 10,000 x 10,000 per query."""
    import tracemalloc

    rng = np.random.default_rng(2)
    n, length = 20, 3000
    rows = [(f"q{q}", f"d{d}", float(-d)) for q in range(n) for d in rng.permutation(length)]
    run_a = _run(rows)
    run_b = _run([(q, d, -s) for q, d, s in rows])  # reversed order: every doc shared
    tracemalloc.start()
    try:
        table = disagreement(run_a, run_b, k=MAX_K)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert table["tau_ap"].to_numpy() == pytest.approx(-1.0)
    assert table[f"jaccard@{MAX_K}"].to_numpy() == pytest.approx(1.0)
    assert peak < 400 * n * length, peak


def test_one_long_list_over_many_queries_is_refused_not_allocated(tmp_path, monkeypatch):
    """One query of 40 documents widens the (queries x k) matrix of all 30 queries to 40
    columns: 1,200 cells, above a bound of 1,000, is refused with one line (the CLI names
    --k), before any matrix is made; k = 25 (750 cells) is computed."""
    import analysis.stats.disagree as dis

    monkeypatch.setattr(dis, "MAX_CELLS", 1_000)
    rows = [(f"q{q}", "d0", 1.0) for q in range(29)] + [("q29", f"d{d}", -d) for d in range(40)]
    with pytest.raises(ValueError, match=r"k = 40 over 30 queries needs 1,200 cells"):
        disagreement(_run(rows), _run(rows), k=MAX_K)
    assert len(disagreement(_run(rows), _run(rows), k=25)) == 30
    path = tmp_path / "a.run"
    path.write_text("".join(f"{q} Q0 {d} 1 {s} A\n" for q, d, s in rows))
    out = tmp_path / "out.csv"
    done = run_main("disagree", "--run", path, "--run", path, "--k", "10000", "--out", out)
    assert done.returncode == 2
    assert done.stderr.startswith("error: --k: k = 40 over 30 queries needs 1,200 cells")
    assert done.stderr.count("\n") == 1
    assert not out.exists()
