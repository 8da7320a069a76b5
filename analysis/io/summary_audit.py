"""Compare a published summary with the means computed from the run it sits beside.

For every metric of the summary (:mod:`analysis.io.summaries`) the mean of the computed
per-query values over the same queries (the summary's split when the dataset has it, else every
query of the qrels) is compared with the published value. They agree when they differ by no more
than float32 rounding (``2**-24 * (log2(n) + 2)`` relative to the larger value, n = queries: the
per-query values of STaRK-like evaluators are 32-bit floats) or than half a unit of the last
digit the summary printed. A summary that agrees gets one ``summary_matches`` line; the metrics
that disagree get a ``summary_mismatch`` warning naming the file, each metric with both values,
and the likely cause, tried in this order:

1. **a different split**: the summary equals the means over another split of the dataset, over
   every query, or over the queries the run answers;
2. **a copied file**: the run file's own per-query columns (STaRK's ``eval_results``) average to
   the computed values, not to the summary's, and the summary's bytes (or all its values) are
   those of another summary of the collection (or of a file it was identical to when
   imported); with the first half only it is "not this run's summary"; with the second only
   and no per-query columns to tell which file is the copy, a question;
3. **the saved depth**: the published value lies between the computed mean and the largest mean
   an evaluator that scores every candidate could reach, the relevant documents missing from
   each saved list ranked right after it (the maximum possible effect, quantified);
4. **another evaluator or qrels**: the run file's own per-query column averages to the summary
   but differs from the computed values on some queries (STaRK's evaluator drops gold ids that
   are not candidates: ``--compat stark``);
5. **a different qrels version** (:func:`analysis.io.importers.stark_checks.qrels_version`);
6. otherwise: unknown.

Metrics sharing a cause are said in one warning, naming the first twenty. The run file's own
per-query columns count each query once (its first row): a file STaRK's ``eval.py`` wrote twice
repeats rows.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from analysis.core.depth import usual_depth
from analysis.core.errors import DataWarning, agreeing
from analysis.core.metrics import evaluate_run, rank_run
from analysis.io.summaries import Summary, canonical_metric

F32 = 2.0**-24
SHOWN = 20  # metrics named in one line, then how many more


@dataclass(frozen=True)
class AuditContext:
    """What an audit compares a summary with, besides the run.

    Attributes:
        qrels: every qrels row of the dataset (``query_id, doc_id, relevance``).
        splits: the dataset's splits (name -> query ids).
        ties, relevance_threshold: as the evaluation.
        run_file_metrics: the run file's own per-query columns (``query_id, <metric>...``).
        nearby: other summaries of the collection (copies).
        version: the run's qrels-version finding, if any.
    """

    qrels: pd.DataFrame
    splits: Mapping[str, Sequence[str]] = field(default_factory=dict)
    ties: str = "trec_eval"
    relevance_threshold: int = 1
    run_file_metrics: pd.DataFrame | None = None
    nearby: Sequence[Summary] = ()
    version: DataWarning | None = None


def tolerance(a: float, b: float, n: int, printed: float = 0.0) -> float:
    """The largest difference still counted as rounding (module docstring)."""
    return max(F32 * (math.log2(max(n, 1)) + 2) * max(abs(a), abs(b), 1e-12), printed)


def _fmt(a: float, b: float) -> tuple[str, str]:
    """Both values with enough decimals to show their difference (4 to 8); six significant
    digits for a value of 10,000 or more, ``nan`` for a mean over no query."""
    diff = abs(a - b)
    if not math.isfinite(diff) or max(abs(a), abs(b)) >= 1e4:
        return f"{a:.6g}", f"{b:.6g}"
    digits = 4 if diff == 0 else min(8, max(4, math.ceil(-math.log10(diff)) + 1))
    return f"{a:.{digits}f}", f"{b:.{digits}f}"


@dataclass
class _Audit:
    summary: Summary
    run: pd.DataFrame
    ctx: AuditContext
    per_query: pd.DataFrame  # every qrels query: query_id + metric columns
    ids: list[str]  # the queries the summary is compared on
    label: str

    def mean(self, metric: str, ids: Sequence[str] | None = None) -> float:
        table = self.per_query
        if ids is not None:
            table = table[table["query_id"].isin(set(ids))]
        return float(table[metric].mean()) if len(table) else float("nan")

    def agrees(self, metric: str, value: float, n: int | None = None) -> bool:
        published, printed = self.summary.means[metric]
        n = len(self.ids) if n is None else n
        return abs(published - value) <= tolerance(published, value, n, printed)


def _scope(summary: Summary, ctx: AuditContext, qrels_ids: list[str]) -> tuple[list[str], str]:
    if summary.split and summary.split in ctx.splits:
        wanted = set(ctx.splits[summary.split])
        ids = [q for q in qrels_ids if q in wanted]
        return ids, f"the {len(ids):,} queries of split {summary.split}"
    return qrels_ids, f"the {len(qrels_ids):,} queries"


def audit_summary(summary: Summary, run: pd.DataFrame, ctx: AuditContext) -> list[DataWarning]:
    """The audit of one summary against the run beside it (module docstring)."""
    metrics = list(summary.means)
    if ctx.run_file_metrics is not None:  # one row per query (module docstring)
        own = ctx.run_file_metrics
        ctx = replace(ctx, run_file_metrics=own[~own["query_id"].astype("str").duplicated()])
    result = evaluate_run(run, ctx.qrels, metrics, ties=ctx.ties,
                          relevance_threshold=ctx.relevance_threshold)  # fmt: skip
    per_query = result.per_query
    ids, label = _scope(summary, ctx, per_query["query_id"].tolist())
    audit = _Audit(summary, run, ctx, per_query, ids, label)
    computed = {m: audit.mean(m, ids) for m in metrics}
    differ = [m for m in metrics if not audit.agrees(m, computed[m])]
    if not differ:
        return [_matches(audit, metrics)]
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for metric, (head, detail, tail) in _causes(audit, differ, computed).items():
        groups.setdefault((head, tail), []).append((metric, detail))
    rest = len(metrics) - len(differ)
    others = f" (its other {rest} metric{'s' if rest > 1 else ''} match{'es' if rest == 1 else ''})"
    others = others if rest else ""
    out = []
    for (head, tail), items in groups.items():
        pairs = _first(
            ["{} {} (computed {})".format(m, *_fmt(summary.means[m][0], computed[m]))
             for m, _ in items[:SHOWN]], len(items)
        )  # fmt: skip
        shown = [d for _, d in items if d]
        details = _first(shown[:SHOWN], len(shown))
        cause = f"{head} {details}{tail}" if details else f"{head}{tail}"
        out.append(
            DataWarning(
                "summary_mismatch",
                len(items),
                f"{summary.name}: the published summary differs from the means computed on "
                f"{label}: {pairs}{others}; likely cause: {cause}",
            )
        )
    return out


def _matches(audit: _Audit, metrics: list[str]) -> DataWarning:
    summary = audit.summary
    extra = f"; not compared: {_keys(summary.ignored)}" if summary.ignored else ""
    scale = " (read as percentages)" if summary.percent else ""
    return DataWarning(
        "summary_matches",
        len(metrics),
        f"{summary.name}: the published summary{scale} matches the means computed on "
        f"{audit.label} ({_first(metrics[:SHOWN], len(metrics))}){extra}",
        level="info",
    )


def _first(items: Sequence[str], total: int) -> str:
    """The items shown, then how many more of ``total`` (a line names at most :data:`SHOWN`
    metrics: a summary may hold thousands)."""
    more = f" and {total - len(items):,} more" if total > len(items) else ""
    return ", ".join(items) + more


def _keys(keys: Sequence[str], shown: int = 10) -> str:
    """The first ``shown`` keys (a key that is not one line of printable text quoted, each cut
    at 40 characters), then how many more."""
    items = [k if k.isprintable() else repr(k) for k in keys[:shown]]
    return _first([k if len(k) <= 40 else k[:39] + "…" for k in items], len(keys))


Cause = tuple[str, str, str]  # (what, the metric's own figures, what follows them)


def _causes(audit: _Audit, differ: list[str], computed: dict[str, float]) -> dict[str, Cause]:
    """metric -> likely cause (module docstring, in that order)."""
    whole = _other_split(audit, differ) or _whole_file(audit, differ, computed)
    if whole:
        return dict.fromkeys(differ, (whole, "", ""))
    out: dict[str, Cause] = {}
    bounds = _depth_bounds(audit, differ)
    unknown = "unknown: check the split, the qrels version and the evaluator it was made with"
    for m in differ:
        out[m] = (
            _depth_cause(audit, m, computed[m], bounds)
            or _evaluator_cause(audit, m)
            or _version_cause(audit.ctx.version)
            or (unknown, "", "")
        )
    return out


def _whole_file(audit: _Audit, differ: list[str], computed: dict[str, float]) -> str | None:
    """A copied file, or a summary the run file's own columns contradict (module docstring)."""
    copy = _copied(audit.summary, audit.ctx.nearby)
    means = _file_means(audit)
    shared = [m for m in differ if m in means]
    if shared and not any(audit.agrees(m, means[m]) for m in shared):
        same = [x for x in shared if abs(means[x] - computed[x]) <= 1e-6]
        shown = same or shared
        m = "hit@1" if "hit@1" in shown else shown[0]
        published = audit.summary.means[m][0]
        here = "as computed here" if same else f"computed here: {_fmt(computed[m], published)[0]}"
        text = (
            f"the run file's own per-query {m} averages to {_fmt(means[m], published)[0]} "
            f"({here}), not to the summary's {_fmt(published, means[m])[0]}"
        )
        return f"a copied file: {text}, and {copy}" if copy else f"not this run's summary: {text}"
    if copy and not shared:  # nothing tells which of the identical files is the copy
        return f"a copied file? {copy}; one of the two is not its run's summary"
    return None


def _copied(summary: Summary, nearby: Sequence[Summary]) -> str | None:
    if summary.identical_to:
        return f"its bytes are identical to those of {summary.identical_to[0]}"
    for other in nearby:
        if other.digest and other.digest == summary.digest and not summary.row:
            return f"its bytes are identical to those of {other.name}"
    for other in nearby:
        if other.means == summary.means:
            return f"its values are identical to those of {other.name}"
    return None


def _file_means(audit: _Audit) -> dict[str, float]:
    """Means of the run file's own per-query columns over the compared queries."""
    table = audit.ctx.run_file_metrics
    if table is None:
        return dict(audit.summary.run_file_means)
    table = table[table["query_id"].astype("str").isin(set(audit.ids))]
    out = {}
    for column in table.columns:
        name = canonical_metric(column) if column != "query_id" else None
        if name in audit.summary.means and len(table):
            out[name] = float(table[column].mean())
    return out


def _other_split(audit: _Audit, differ: list[str]) -> str | None:
    sets: dict[str, list[str]] = {
        f"split {name}": list(ids) for name, ids in audit.ctx.splits.items()
    }
    sets["every query"] = audit.per_query["query_id"].tolist()
    sets["the queries the run answers"] = audit.run["query_id"].astype("str").unique().tolist()
    for name, ids in sets.items():
        if set(ids) == set(audit.ids) or not ids:
            continue
        if all(audit.agrees(m, audit.mean(m, ids), len(ids)) for m in differ):
            n = len(set(ids) & set(audit.per_query["query_id"]))
            return f"a different split: the summary equals the means over {name} ({n:,} queries)"
    return None


def _depth_bounds(audit: _Audit, metrics: list[str]) -> tuple[dict[str, float], int, int]:
    """(metric -> the largest mean an evaluator that scores every candidate could reach: each
    query's relevant documents missing from its saved list ranked right after it, the most
    relevant first; queries with no relevant document in their list; the run's usual depth)."""
    ctx = audit.ctx
    ranked = rank_run(audit.run, ctx.ties)[["query_id", "doc_id", "rank"]]  # type: ignore[arg-type]
    depth = ranked.groupby("query_id", sort=False)["rank"].max()
    gold = ctx.qrels.astype({"query_id": "str", "doc_id": "str"})
    gold = gold[(gold["relevance"] > 0) & gold["query_id"].isin(depth.index)]
    gold = gold.sort_values("relevance", ascending=False, kind="stable")
    gold = gold.drop_duplicates(["query_id", "doc_id"]).merge(
        ranked, on=["query_id", "doc_id"], how="left"
    )
    missing = gold[gold["rank"].isna()].sort_values("query_id", kind="stable")
    after = missing.groupby("query_id", sort=False).cumcount().to_numpy() + 1
    tail = missing[["query_id", "doc_id"]].assign(
        rank=depth.loc[missing["query_id"]].to_numpy() + after
    )
    best_run = pd.concat([ranked, tail], ignore_index=True)
    best_run["score"] = -best_run["rank"].astype(np.float64)
    best = evaluate_run(best_run, ctx.qrels, metrics, ties="stable",
                        relevance_threshold=ctx.relevance_threshold).per_query  # fmt: skip
    best = best[best["query_id"].isin(set(audit.ids))]
    found = gold[gold["relevance"] >= ctx.relevance_threshold].groupby("query_id")["rank"].count()
    beyond = int(((found == 0) & found.index.isin(set(audit.ids))).sum())
    return {m: float(best[m].mean()) for m in metrics}, beyond, usual_depth(depth.to_numpy())


def _depth_cause(audit: _Audit, m: str, value: float, bounds: tuple) -> Cause | None:
    best, beyond, depth = bounds
    published = audit.summary.means[m][0]
    tol = tolerance(published, value, len(audit.ids), audit.summary.means[m][1])
    if best[m] - value <= tol or not (value - tol <= published <= best[m] + tol):
        return None
    head = (
        f"the saved depth: {beyond} of {len(audit.ids):,} queries "
        f"{agreeing(beyond)[0]} no relevant document "
        f"within the saved depth {depth} (others may miss part of theirs); an evaluator that "
        "scores every candidate could raise the mean"
    )
    detail = f"{m} by at most {best[m] - value:.6f} (the summary is {published - value:.6f} higher)"
    return head, detail, ""


def _evaluator_cause(audit: _Audit, m: str) -> Cause | None:
    means = _file_means(audit)
    if m not in means or not audit.agrees(m, means[m]):
        return None
    table = audit.ctx.run_file_metrics
    detail = m
    if table is not None:
        column = next(c for c in table.columns if c != "query_id" and canonical_metric(c) == m)
        theirs = table.set_index(table["query_id"].astype("str"))[column]
        ours = audit.per_query.set_index("query_id")[m].reindex(theirs.index)
        differ = theirs.index[(theirs - ours).abs().to_numpy() > 1e-6]
        noun = "query" if len(differ) == 1 else "queries"
        detail = f"{m} on {len(differ)} {noun} ({', '.join(differ[:5])})"
    head = (
        "another evaluator or qrels: the run file's own per-query columns average to the summary "
        "but differ from the computed values:"
    )
    tail = " (STaRK's evaluator drops gold ids that are not candidates: try --compat stark)"
    return head, detail, tail


def _version_cause(version: DataWarning | None) -> Cause | None:
    if version is None:
        return None
    return "a different qrels version: " + version.message.removeprefix("qrels version: "), "", ""
