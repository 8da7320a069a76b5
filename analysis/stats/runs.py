"""Paired comparison of two or more runs on the same qrels (``analysis.compare`` and the
``compare`` command).

For every pair of runs (A before B in the given order) and every metric, one row: ``metric, a,
b, seeds_a, seeds_b, n, mean_a, mean_b, delta, ci_low, ci_high, wins, ties, losses, p_t, p_wilcoxon,
p_randomization, d_z, p_holm`` (+ ``p_floor``, ``p_holm_bound``, ``randomization_exact``).

* Queries: every qrels query (within the split, when given); a query missing from a run scores 0
  there (trec_eval ``-c``), so all runs are paired on the same queries.
* ``delta = mean(a - b)`` with its percentile bootstrap CI (seeded, B resamples); ``p_t`` is
  ``scipy.stats.ttest_rel``, ``p_wilcoxon`` ``scipy.stats.wilcoxon(zero_method="wilcox")``,
  ``p_randomization`` the paired sign-flip test (exact enumeration when ``2**m <= B``, else B
  seeded random sign patterns, ``p = (1 + #) / (1 + B)``), ``d_z`` Cohen's d_z; see
  :func:`analysis.stats.paired_comparison`.
* A *seed group* (one model trained with several seeds, ``groups`` of :func:`compare`) is
  compared by its per-query seed means: ``mean_a``, the CI, ``p_t``, ... are computed on them,
  and ``seeds_a``/``seeds_b`` say how many seeds each side has (1 for a single run).
  ``seed_pairs`` (``seeds_a * seeds_b``) and ``seed_flips`` say how many pairs of one seed of
  A and one of B there are and how many of them give ``mean(a - b)`` another sign than
  ``delta`` (:func:`analysis.stats.groups.seed_sensitivity`): a gain that some seed pairs
  reverse rests on the seeds drawn.
* A *fold group* (one cross-validated model, one run per fold) is compared as one run, each
  query scored by the run of its fold (:func:`pool_folds`): the paired tests then run over
  every query of every fold, not fold by fold.
* ``p_holm``: Holm's adjustment of ``p_randomization`` across every row of the call (pairs x
  metrics). ``p_floor`` / ``p_holm_bound`` flag values that are only upper bounds (the
  randomization floor ``1/(B+1)``).

:func:`significance_letters` gives ranx-style letters: run ``i`` gets the letter ``a``, ``b``,
... in order, and a (run, metric) cell lists the letters of the runs it beats with
``p_holm < alpha``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from analysis.stats.paired import holm, holm_bounds, paired_comparison
from analysis.stats.significance import model_letters

COLUMNS: tuple[str, ...] = (
    "metric", "a", "b", "seeds_a", "seeds_b", "n", "mean_a", "mean_b", "delta", "ci_low",
    "ci_high", "wins", "ties", "losses", "p_t", "p_wilcoxon", "p_randomization", "d_z", "p_holm",
)  # fmt: skip
EXTRA_COLUMNS: tuple[str, ...] = (
    "p_floor", "p_holm_bound", "randomization_exact", "seed_pairs", "seed_flips",
)  # fmt: skip


def compare_per_query(
    values: Mapping[str, Mapping[str, np.ndarray]],
    metrics: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int | None = 0,
    confidence: float = 0.95,
    seeds: Mapping[str, int] | None = None,
    per_seed: Mapping[str, Mapping[str, np.ndarray]] | None = None,
) -> pd.DataFrame:
    """The comparison table from aligned per-query values: ``values[run][metric]`` is one array
    per run and metric, query ``i`` at position ``i`` for every run (for a seed group, its
    per-query seed means; ``seeds[run]`` its number of seeds, 1 when not given;
    ``per_seed[run][metric]`` its ``(queries, seeds)`` values, for ``seed_flips``).

    Raises:
        ValueError: fewer than two runs, arrays of different lengths, NaN values.
    """
    names = list(values)
    if len(names) < 2:
        raise ValueError("compare needs at least two runs")
    rows = []
    for a, b in itertools.combinations(names, 2):
        for metric in metrics:
            r = paired_comparison(
                values[a][metric], values[b][metric],
                n_resamples=n_resamples, seed=seed, confidence=confidence,
            )  # fmt: skip
            rows.append(
                {
                    "metric": metric, "a": a, "b": b, "seeds_a": (seeds or {}).get(a, 1),
                    "seeds_b": (seeds or {}).get(b, 1), "n": r.n, "mean_a": r.mean_a,
                    "mean_b": r.mean_b, "delta": r.delta, "ci_low": r.ci_low,
                    "ci_high": r.ci_high, "wins": r.wins, "ties": r.ties, "losses": r.losses,
                    "p_t": r.p_t, "p_wilcoxon": r.p_wilcoxon,
                    "p_randomization": r.p_randomization, "d_z": r.effect_size,
                    "p_floor": r.randomization_floor,
                    "randomization_exact": r.randomization_exact,
                    **_seed_flips(values, per_seed or {}, (a, b), metric),
                }
            )  # fmt: skip
    out = pd.DataFrame.from_records(rows)
    out["p_holm"] = holm(out["p_randomization"])
    out["p_holm_bound"] = holm_bounds(out["p_randomization"], out["p_floor"])
    return out[[*COLUMNS, *EXTRA_COLUMNS]]


def _seed_flips(
    values: Mapping[str, Mapping[str, np.ndarray]],
    per_seed: Mapping[str, Mapping[str, np.ndarray]],
    pair: tuple[str, str],
    metric: str,
) -> dict[str, int]:
    """``seed_pairs`` and ``seed_flips`` of one row (1 and 0 for two single runs)."""
    if not any(metric in per_seed.get(name, {}) for name in pair):
        return {"seed_pairs": 1, "seed_flips": 0}
    from analysis.stats.groups import seed_sensitivity

    a, b = (per_seed.get(n, {}).get(metric, np.asarray(values[n][metric])[:, None]) for n in pair)
    result = seed_sensitivity(a, b)
    return {"seed_pairs": result.n_pairs, "seed_flips": result.n_flips}


def seed_matrices(
    values: Mapping[str, Mapping[str, np.ndarray]], groups: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, np.ndarray]]:
    """Each seed group's ``(queries, seeds)`` values per metric (its runs' columns)."""
    out: dict[str, dict[str, np.ndarray]] = {}
    for name, members in groups.items():
        runs = list(dict.fromkeys(members))
        metrics = values[runs[0]]
        out[name] = {m: np.column_stack([values[r][m] for r in runs]) for m in metrics}
    return out


def compare(
    runs: Mapping[str, pd.DataFrame | Sequence[pd.DataFrame] | Mapping[str, pd.DataFrame]],
    qrels: pd.DataFrame,
    metrics: str | Iterable[str] = ("hit@1", "recall@20", "mrr", "ndcg@10"),
    *,
    split: Sequence[str] | None = None,
    ties: str = "trec_eval",
    relevance_threshold: int = 1,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> pd.DataFrame:
    """Evaluate every run on ``qrels`` and compare every pair (module docstring). A value of
    ``runs`` that is a list of runs is one model trained with several seeds (a seed group): it
    is compared by its per-query seed means, and ``seeds_a``/``seeds_b`` count its runs. A
    value that is a mapping ``{fold: run}`` is one cross-validated model (a fold group): each
    query is scored by the run of its fold, the run that answers it (:func:`pool_folds`), and
    the model is compared on every query as one run.

    >>> table = analysis.compare({"bm25": run_a, "dense": run_b}, qrels, ["mrr"])  # doctest: +SKIP
    >>> analysis.compare({"bm25": run, "dense": [seed1, seed2, seed3]}, qrels)  # doctest: +SKIP
    >>> analysis.compare({"bm25": run, "ltr": {"f1": run1, "f2": run2}}, qrels)  # doctest: +SKIP

    Every run is a DataFrame ``query_id, doc_id, score``: :func:`analysis.as_run` reads the
    others (a dict ``{query_id: {doc_id: score}}``, a ranx ``Run``, a PyTerrier frame, ...).
    A metric named twice (``hit@1`` and ``HIT@1``, ``mrr`` and ``recip_rank``) is compared once,
    under its first name, so that it is not counted twice in Holm's correction.

    Raises:
        ValueError: a seed group of fewer than two runs, fold runs that answer the same query.
        InputError: ``runs`` is not a mapping, or one of its runs (or ``qrels``) is not a
            DataFrame (naming it).
    """
    from analysis.core.metrics import evaluate_run

    wanted = distinct_metrics(metrics)
    values: dict[str, dict[str, np.ndarray]] = {}
    groups: dict[str, list[str]] = {}
    for name, given in _runs(runs).items():
        if isinstance(given, Mapping):
            given = pool_folds(_frames(given, name), name)
        many = isinstance(given, list | tuple)
        members = {f"{name}#{i + 1}": r for i, r in enumerate(given)} if many else {name: given}
        if many:
            groups[name] = list(members)
        _frames(members, name)
        for member, run in members.items():
            result = evaluate_run(run, qrels, wanted, ties=ties,
                                  relevance_threshold=relevance_threshold, split=split)  # fmt: skip
            values[member] = {m: result.per_query[m].to_numpy(dtype=float) for m in wanted}
    per_seed = seed_matrices(values, groups)
    values, sizes = seed_means(values, groups)
    return compare_per_query(values, wanted, n_resamples=n_resamples, seed=seed, seeds=sizes,
                             per_seed=per_seed)  # fmt: skip


def distinct_metrics(metrics: str | Iterable[str]) -> list[str]:
    """The names of ``metrics`` (parsed), each metric once under its first name: ``hit@1`` and
    ``HIT@1``, ``mrr`` and ``recip_rank`` are one metric, one member of Holm's family.

    Raises:
        ValueError: an unknown metric (:func:`analysis.core.names.parse_metrics`).
    """
    from analysis.core.metrics import parse_metrics

    labels: dict[tuple[str, int | None], str] = {}
    for m in parse_metrics(metrics):
        labels.setdefault((m.measure, m.k), m.label)
    return list(labels.values())


def _runs(runs: object) -> Mapping:
    """``runs`` when it is a mapping ``{name: run}`` of at least one run.

    Raises:
        InputError: anything else.
    """
    from analysis.core.errors import InputError

    if not isinstance(runs, Mapping) or not runs:
        raise InputError(
            "runs", None, f"{type(runs).__name__}: give the runs as a mapping {{name: DataFrame}}"
        )
    return runs


def _frames(members: Mapping, name: str) -> Mapping:
    """``members`` (the runs of ``name``: itself, its seeds ``name#i`` or its folds) when each
    is a DataFrame.

    Raises:
        InputError: naming the first one that is not (a dict run given as a value of ``runs``
            was taken for a fold group ``{fold: run}``).
    """
    import pandas as pd

    from analysis.core.errors import InputError
    from analysis.io.dicts import shown

    for member, run in members.items():
        if not isinstance(run, pd.DataFrame):
            where = "" if member == name else f"{shown(member, 40)}: "
            raise InputError(
                f"run {name!r}",
                None,
                f"{where}a {type(run).__name__} is not a DataFrame (a mapping is a fold group "
                "{fold: DataFrame}); read a run with analysis.as_run()",
            )
    return members


def pool_folds(folds: Mapping[str, pd.DataFrame], name: str = "fold group") -> pd.DataFrame:
    """The runs of a fold group (``{fold: run}``, each run over the queries of its fold) as
    one run: their rows, concatenated. A query answered by no fold's run scores 0, as a query
    missing from a run.

    Raises:
        ValueError: fewer than two folds, or a query answered by the runs of two folds (each
            query belongs to one fold).
    """
    if len(folds) < 2:
        raise ValueError(f"{name}: a fold group needs two or more folds")
    from analysis.io.groups import fold_clash

    clash = fold_clash({fold: run["query_id"].unique() for fold, run in folds.items()})
    if clash is not None:
        query, first, fold = clash
        raise ValueError(f"{name}: query {query!r} is answered by the runs of folds {first!r} "
                         f"and {fold!r}")  # fmt: skip
    return pd.concat(list(folds.values()), ignore_index=True)


def seed_means(
    values: Mapping[str, Mapping[str, np.ndarray]], groups: Mapping[str, Sequence[str]]
) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, int]]:
    """The entries to compare: each group (at the place of its first run) with the mean of its
    runs' values per query, and every run that is in no group; and each entry's seeds.

    Raises:
        ValueError: a member that is not a run, fewer than two members, a group named like a
            run.
    """
    for name, members in groups.items():
        if name in values:
            raise ValueError(f"group {name!r} is named like a run")
        unknown = [m for m in members if m not in values]
        if unknown or len(set(members)) < 2:
            raise ValueError(f"group {name!r} needs two or more of the runs {list(values)}")
    order = list(values)
    first: dict[int, list[str]] = {}
    for name, members in groups.items():
        first.setdefault(min(order.index(m) for m in members), []).append(name)
    grouped = {m for ms in groups.values() for m in ms}
    out: dict[str, dict[str, np.ndarray]] = {}
    sizes: dict[str, int] = {}
    for i, run in enumerate(order):
        for name in first.get(i, []):
            members = list(dict.fromkeys(groups[name]))
            out[name] = {m: np.mean([values[r][m] for r in members], axis=0)
                         for m in values[run]}  # fmt: skip
            sizes[name] = len(members)
        if run not in grouped:
            out[run], sizes[run] = dict(values[run]), 1
    return out, sizes


def significance_letters(
    table: pd.DataFrame, runs: Sequence[str], metrics: Sequence[str], alpha: float = 0.05
) -> pd.DataFrame:
    """ranx-style table: one row per run (``letter``, ``run``), one column per metric holding
    ``(mean, letters)``: the run's mean and the letters of the runs it beats (``delta`` in its
    favour with ``p_holm < alpha``)."""
    tags = model_letters(runs)
    means: dict[tuple[str, str], float] = {}
    beats: dict[tuple[str, str], list[str]] = {(r, m): [] for r in runs for m in metrics}
    for row in table.to_dict("records"):
        means[(row["a"], row["metric"])] = row["mean_a"]
        means[(row["b"], row["metric"])] = row["mean_b"]
        if row["p_holm"] < alpha and row["delta"] != 0:
            winner, loser = (row["a"], row["b"]) if row["delta"] > 0 else (row["b"], row["a"])
            beats[(winner, row["metric"])].append(tags[loser])
    records = []
    for run in runs:
        record: dict[str, object] = {"letter": tags[run], "run": run}
        for m in metrics:
            record[m] = (means.get((run, m), np.nan), "".join(sorted(beats[(run, m)])))
        records.append(record)
    return pd.DataFrame.from_records(records)
