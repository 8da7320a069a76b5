"""The slide deck: at most :data:`MAX_SLIDES` 16:9 slides, each one headline sentence written
from the numbers and one figure or one small table (:func:`build_deck`), and the deck as one
offline HTML file with its own keyboard navigation
(:func:`analysis.present.report.deck_html.render_deck`).

Slides, in order (a slide whose numbers are missing is left out):

1. **Overview**: per dataset the report metric, the best model with its mean and 95% CI, and
   A's and B's means.
2. **Best model per dataset**: the leaderboard chart of the report metric.
3. **A vs B**: delta per dataset and metric with 95% CI; the headline counts the differences
   that are significant after Holm correction and names the largest.
4. **Worst slices** of model A (one per dataset, the largest gap below A's overall mean).
5. **Slice differences**: the per-slice A − B deltas that are significant after Holm (else the
   largest ones).
6. **Failure causes** of model A per dataset (queries at 0, tie-dependent, non-gold POI on the
   gold's coordinate above the gold, missing from the run, more gold than k).
7. **One example query per cause** (the cause's largest count over the datasets): the query,
   and model A's top of the ranking with the gold marked when the report has it.
8. **Beyond the averages**, when the budget has room: per dataset the best single model, the
   oracle best-of-N, the queries no model solves and model A's most frequent failure cause
   (taxonomy and complementarity, :mod:`analysis.present.analyses_report`).
9. Slice charts of the datasets with the worst slices, until :data:`MAX_SLIDES`.

Every slide is designed for a 1280 x 720 px stage: tables have at most :data:`MAX_ROWS` rows and
cells are cut to :data:`CELL_CHARS` characters; figures are drawn :data:`FIGURE_HEIGHT` px
high. In the HTML file the stage is scaled to the window (letterboxed to 16:9), so it fits
1280 x 720 and 1920 x 1080 alike. Keys: → ↓ PageDown Space = next, ← ↑ PageUp = previous, Home /
End; the slide number is kept in the address (``#slide=N``). Text from files is escaped with
:func:`~analysis.present.export.escape_html` (tables, headlines) and
:func:`~analysis.present.export.plotly_text` (figures); the file contains no external URL and
inlines plotly.js once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import pandas as pd
import plotly.graph_objects as go

from analysis.present.palette import FONT_FAMILY, model_colours
from analysis.present.report.figures import compare_figure, leaderboard_figure, slice_figure
from analysis.present.report.model import ALPHA, ReportContent, fmt, slice_columns_of, slug
from analysis.present.report.numbers import DatasetNumbers, possible_causes
from analysis.present.report.summary import shows_below, tied_top
from analysis.present.report.tables import p_cells
from analysis.stats.paired import p_phrase

__all__ = ["FIGURE_HEIGHT", "MAX_SLIDES", "STAGE", "Slide", "build_deck"]

MAX_SLIDES = 12
MAX_ROWS = 8
CELL_CHARS = 48
HEADLINE_CHARS = 150
FIGURE_HEIGHT = 470
STAGE = (1280, 720)
#: Headline of the example slide of each failure cause (columns of the causes table).
CAUSE_HEADLINES = {
    "at 0": "Complete failures: {a} scores {metric} = 0 on {c} of {n} {ds} queries",
    "tie-dependent": "Ties: {metric} of {a} depends on the tie order on {c} of {n} {ds} queries",
    "non-gold on gold coordinate above gold": "Same coordinate: a non-gold POI on the gold's "
    "spot ranks above it on {c} of {n} {ds} queries",
    "missing from run": "Missing: {c} of {n} {ds} queries are absent from {a}'s run",
    "more gold than k": "Caps: {c} of {n} {ds} queries have more gold than the cutoff",
}


#: The one-line note under each slide (the examples and slice charts write their own).
NOTES = {
    "best": "The report metric of each dataset; error bars: 95% bootstrap CI.",
    "significance": "Delta = A − B with 95% bootstrap CI; paired sign-flip test (B = 10,000), Holm "
    "over every dataset × metric.",
    "worst-slices": "Model A's slice furthest below its overall mean per dataset (≥ 10 queries).",
    "slice-deltas": "Per-slice paired sign-flip tests, Holm within each dataset.",
    "causes": "Queries of model A ({a}) per cause of the report metric.",
    "beyond": "Oracle: mean of the best model's value per query, an upper bound, not a score; "
    "solved = the report metric reaches 1.",
}


@dataclass(frozen=True)
class Slide:
    """One slide: a plain-text ``headline`` (names from files unescaped: render as text), one
    ``figure`` or ``table`` (strings, at most MAX_ROWS rows) and a one-line ``note``."""

    key: str
    headline: str
    kind: Literal["figure", "table"]
    figure: go.Figure | None = None
    table: pd.DataFrame | None = None
    note: str = ""


def _cut(text: object, limit: int = CELL_CHARS) -> str:
    value = "" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


#: a number of a headline (a sign, digits, decimals): a cut never falls inside one
_NUMBER = re.compile(r"[+\-\u2212]?\d+(?:[.,]\d+)*")


def _headline(text: str) -> str:
    """``text`` on one line, cut to :data:`HEADLINE_CHARS` with "…" when longer; a cut that
    would fall inside a number (``+0.238`` as ``+0.23…``, another value) falls before it."""
    flat = " ".join(str(text).split())
    if len(flat) <= HEADLINE_CHARS:
        return flat
    cut = HEADLINE_CHARS - 1
    for number in _NUMBER.finditer(flat):
        if number.start() < cut < number.end():
            cut = number.start()
            break
    return flat[:cut].rstrip() + "…"


def _table(frame: pd.DataFrame) -> pd.DataFrame:
    """At most MAX_ROWS rows, every cell a short string (floats with 3 decimals)."""
    out = frame.head(MAX_ROWS).copy()
    for col in out.columns:
        out[col] = [fmt(v) if isinstance(v, float) else _cut(v) for v in out[col].tolist()]
    return out.reset_index(drop=True)


def _fit(fig: go.Figure, *, height: int = FIGURE_HEIGHT) -> go.Figure:
    """A copy sized for the stage: fixed height, no title (the headline says it), compact
    margins, larger type."""
    out = go.Figure(fig)
    out.update_layout(
        height=height,
        width=None,
        title=None,
        margin={"l": 10, "r": 20, "t": 70, "b": 40},
        font={"size": 15, "family": FONT_FAMILY},
    )
    return out


def _table_slide(key: str, text: str, table: pd.DataFrame, *, note: str) -> Slide:
    """A table slide: the headline cut to length, the table cut to the stage."""
    return Slide(key, _headline(text), "table", table=_table(table), note=note)


def _figure_slide(key: str, text: str, fig: go.Figure, *, note: str) -> Slide:
    """A figure slide: the headline cut to length, the figure sized for the stage."""
    return Slide(key, _headline(text), "figure", figure=_fit(fig), note=note)


def _mean_ci(board: pd.DataFrame, model: str | None, metric: str) -> str:
    rows = board.loc[(board["model"] == model) & (board["metric"] == metric)]
    if rows.empty:
        return "–"
    r = rows.iloc[0]
    return f"{fmt(r['mean'])} [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]"


def _best(num: DatasetNumbers) -> pd.Series | None:
    part = num.board.loc[num.board["metric"] == num.metric]
    if part.empty:
        return None
    return part.sort_values("mean", ascending=False, kind="stable").iloc[0]


def _overview(content: ReportContent, per: dict[str, DatasetNumbers]) -> Slide:
    a, b = content.model_a, content.model_b
    rows = []
    for name in content.datasets:
        num = per[name]
        top = _best(num)
        rows.append(
            {
                "dataset": name,
                "queries": int(top["n"]) if top is not None else 0,
                "metric": num.metric,
                "best model": "" if top is None else top["model"],
                "best (95% CI)": _mean_ci(
                    num.board, None if top is None else top["model"], num.metric
                ),
                f"A = {a}": _mean_ci(num.board, a, num.metric),
                **({f"B = {b}": _mean_ci(num.board, b, num.metric)} if b else {}),
            }
        )
    models = f"A = {a}" + (f" vs B = {b}" if b else "")
    return Slide(
        "overview",
        _headline(
            f"{content.bundle or 'Report'}: {_plural(len(content.datasets), 'dataset')}, {models}"
        ),
        "table",
        table=_table(pd.DataFrame(rows)),
        note="Means over every query of the qrels with seeded 95% bootstrap CIs (B = 10,000).",
    )


def _leaderboard(content: ReportContent, per: dict[str, DatasetNumbers], colours) -> Slide:
    wins: dict[str, list[str]] = {}
    for name in content.datasets:
        top = _best(per[name])
        if top is not None:
            wins.setdefault(str(top["model"]), []).append(name)
    ranked = sorted(wins.items(), key=lambda kv: -len(kv[1]))
    if len(content.datasets) == 1 and ranked:
        num = per[content.datasets[0]]
        part = num.board.loc[num.board["metric"] == num.metric].sort_values(
            "mean", ascending=False, kind="stable"
        )
        tied, rest = tied_top(part)
        top = part.iloc[0]
        if len(tied) > 1:
            text = f"{num.name} by {num.metric}: a tie at {fmt(top['mean'])}: " + ", ".join(tied)
        else:
            text = f"Best on {num.name} by {num.metric}: {top['model']} with {fmt(top['mean'])}"
        if len(rest):
            text += f"; runner-up {rest.iloc[0]['model']} {fmt(rest.iloc[0]['mean'])}"
    elif len(ranked) == 1:
        text = f"{ranked[0][0]} is the best model on all {len(content.datasets)} datasets"
    else:
        text = "Best: " + "; ".join(
            f"{m} on {len(ds)} of {len(content.datasets)}" if len(ds) > 1 else f"{m} on {ds[0]}"
            for m, ds in ranked[:4]
        )
    board = pd.concat([per[n].board for n in content.datasets], ignore_index=True)
    fig = leaderboard_figure(board, content.datasets, content.metrics, colours)
    return _figure_slide("best", text, fig, note=NOTES["best"])


def _tested(content: ReportContent, key: str) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The table ``key`` of the content's numbers and its rows significant after Holm."""
    frame = content.numbers.get(key, pd.DataFrame())
    if frame is None or frame.empty:
        return None
    return frame, frame.loc[frame["p_holm"] < ALPHA]


def _significance(content: ReportContent) -> Slide | None:
    found = _tested(content, "compare")
    if found is None:
        return None
    comp, sig = found
    text = (
        f"A = {content.model_a} vs B = {content.model_b}: {len(sig)} of {len(comp)} "
        "differences are significant after Holm"
    )
    if len(sig):
        top = sig.loc[sig["delta"].abs().idxmax()]
        text += f"; largest {top['dataset']} {top['metric']} {top['delta']:+.3f}"
    fig = compare_figure(comp, str(content.model_a), str(content.model_b))
    return _figure_slide("significance", text, fig, note=NOTES["significance"])


def _worst_slices(content: ReportContent, per: dict[str, DatasetNumbers]) -> Slide | None:
    rows = [per[n].worst_slices.head(1) for n in content.datasets if not per[n].worst_slices.empty]
    if not rows:
        return None
    worst = pd.concat(rows, ignore_index=True).sort_values("gap", kind="stable")
    top = worst.iloc[0]
    text = (
        f"Worst slice of {content.model_a}: {top['dataset']} {top['slice']} = {top['value']}, "
        f"{top['metric']} {fmt(top['mean'])} vs {fmt(top['overall'])} overall (n = {int(top['n'])})"
        if shows_below(top)
        else f"No slice of {content.model_a} is below its overall {top['metric']}"
    )
    table = pd.DataFrame(
        {
            "dataset": worst["dataset"],
            "slice": worst["slice"].astype(str) + " = " + worst["value"].astype(str),
            "metric": worst["metric"],
            "n": worst["n"].astype(int).astype(str),
            "mean (95% CI)": [
                f"{fmt(m)} [{fmt(lo)}, {fmt(hi)}]"
                for m, lo, hi in zip(worst["mean"], worst["ci_low"], worst["ci_high"], strict=True)
            ],
            "overall": worst["overall"].astype(float),
            "gap": worst["gap"].astype(float),
        }
    )
    return _table_slide("worst-slices", text, table, note=NOTES["worst-slices"])


def _slice_deltas(content: ReportContent) -> Slide | None:
    found = _tested(content, "slice_deltas")
    if found is None:
        return None
    deltas, sig = found
    pick = (sig if len(sig) else deltas).reindex(
        (sig if len(sig) else deltas)["delta"].abs().sort_values(ascending=False).index
    )
    top = pick.iloc[0]
    where = f"{top['dataset']} {top['slice']} = {top['value']}"
    if len(sig):
        text = (
            f"{len(sig)} slice differences are significant after Holm; largest: {where} "
            f"({top['metric']} {top['delta']:+.3f}, "
            f"{p_phrase(top['p_holm'], bound=bool(top['p_holm_bound']))}, n = {int(top['n'])})"
        )
    else:  # no finding: no p-value in the headline
        text = (
            f"No slice difference between A and B is significant after Holm "
            f"({len(deltas)} slices tested; the largest, {where}, is {top['delta']:+.3f})"
        )
    table = pd.DataFrame(
        {
            "dataset": pick["dataset"],
            "slice": pick["slice"].astype(str) + " = " + pick["value"].astype(str),
            "n": pick["n"].astype(int).astype(str),
            "mean A": pick["mean_a"].astype(float),
            "mean B": pick["mean_b"].astype(float),
            "delta A−B": [f"{d:+.3f}" for d in pick["delta"]],
            "p (Holm)": p_cells(pick["p_holm"], pick["p_holm_bound"]),
        }
    )
    return _table_slide("slice-deltas", text, table, note=NOTES["slice-deltas"])


def _causes(content: ReportContent) -> Slide | None:
    causes = content.numbers.get("causes", pd.DataFrame())
    if causes is None or causes.empty or content.model_a is None:
        return None
    mine = causes.loc[causes["model"] == content.model_a].reset_index(drop=True)
    if mine.empty:
        return None
    share = mine["at 0"] / mine["n"].clip(lower=1)
    worst = mine.loc[share.idxmax()]
    text = (
        f"{content.model_a} fails ({worst['metric']} = 0) on {int(worst['at 0'])} of "
        f"{int(worst['n'])} queries of {worst['dataset']}"
    )
    ties = mine.loc[mine["tie-dependent"].idxmax()]
    if ties["tie-dependent"] > 0:
        text += f"; ties decide {int(ties['tie-dependent'])} queries on {ties['dataset']}"
    cols = {"dataset": "dataset", "metric": "metric", "n": "n"}
    possible = possible_causes(mine)
    cols.update({c: c for c in CAUSE_HEADLINES if c in possible})
    table = mine[list(cols)].rename(
        columns={"non-gold on gold coordinate above gold": "non-gold on gold coord."}
    )
    for c in table.columns[2:]:
        table[c] = ["–" if pd.isna(v) else str(int(v)) for v in table[c]]
    return _table_slide("causes", text, table, note=NOTES["causes"].format(a=content.model_a))


def _example_slides(content: ReportContent) -> list[Slide]:
    """One slide per failure cause of model A with its example query
    (:mod:`~analysis.present.report.examples`): A's top ranks with the gold marked, or the
    query's numbers when the report has no rankings."""
    slides = []
    for ex in content.examples:
        headline = CAUSE_HEADLINES[ex.cause].format(  # type: ignore[attr-defined]
            a=content.model_a, metric=ex.metric, c=ex.count, n=ex.n, ds=ex.dataset
        )
        text = f" “{_cut(ex.text, 40)}”" if ex.text else ""
        headline += f"; e.g. query {ex.query_id}{text}"
        what = "its numbers"
        table = ex.row.drop(columns=["text"], errors="ignore")
        if ex.view is not None:
            ranking = _ranking_preview(ex.view, content.model_a)
            if not ranking.empty:
                table, what = ranking, "model A's top ranks, gold marked"
            elif not ex.view.gold.empty:
                table, what = ex.view.gold, "its gold documents (model A returned nothing)"
        slides.append(
            _table_slide(
                f"example-{slug(ex.cause)}",
                headline,
                table,
                note=f"Example of the cause “{ex.cause}” ({ex.metric}): {what}.",
            )
        )
    return slides


def _ranking_preview(view, model_a: str | None) -> pd.DataFrame:
    """Model A's top of the ranking of a query (rank, doc, name, gold), then B's doc."""
    rank = view.rankings
    cols = ["rank"] + [c for c in rank.columns if c.startswith(f"{model_a}: ")]
    out = rank[cols].copy()
    out.columns = [c.split(": ", 1)[-1] if ": " in c else c for c in out.columns]
    if "gold" in out.columns:
        out["gold"] = ["gold" if bool(g) else "" for g in out["gold"]]
    return out


def _part(content: ReportContent, name: str, prefix: str):
    """The analyses part ``<prefix>-<dataset>`` of ``name`` (None when absent)."""
    key = slug(f"{prefix}-{name}")
    return next((p for p in content.analyses.get(name, ()) if p.key == key), None)  # type: ignore[attr-defined]


def _beyond(content: ReportContent) -> Slide | None:
    """Beyond the averages: per dataset the best single model, the oracle best-of-N (the best
    model per query, picked with hindsight), the queries no model solves and model A's most
    frequent failure cause (:mod:`analysis.present.analyses_report`)."""
    rows = []
    for name in content.datasets:
        best, inter, tax = (
            _part(content, name, p) for p in ("oracle", "intersections", "taxonomy")
        )
        if best is None or best.table is None or best.table.empty:
            continue
        top = best.table.iloc[0]
        none = 0
        if inter is not None and inter.table is not None:
            none = int(inter.table.loc[inter.table["models"] == "(none)", "n"].sum())
        cause = "–"
        if tax is not None and tax.table is not None:
            mine = tax.table.loc[tax.table["model"].astype(str) == str(content.model_a)]
            fails = [c for c in mine.columns if c not in ("model", "hit", "queries")]
            if not mine.empty and fails:
                counts = mine.iloc[0][fails].astype(int)
                if counts.max() > 0:
                    cause = f"{counts.idxmax()} ({int(counts.max())})"
        rows.append(
            {
                "dataset": name,
                "metric": content.metrics.get(name, ""),
                "best single": f"{top['best_model']} {fmt(float(top['best_single']))}",
                "oracle": fmt(float(top["oracle"])),
                "solved by none": f"{none} of {int(top['n'])}",
                "A's top miss cause": cause,
            }
        )
    if not rows:
        return None
    gains = [(float(_part(content, r["dataset"], "oracle").table.iloc[0]["oracle_gain"]), r)  # type: ignore[union-attr]
             for r in rows]  # fmt: skip
    gain, top_row = max(gains, key=lambda g: g[0])
    text = (
        f"Picking the best model per query would add {fmt(gain)} {top_row['metric']} on "
        f"{top_row['dataset']} (oracle, with hindsight)"
    )
    return _table_slide("beyond", text, pd.DataFrame(rows), note=NOTES["beyond"])


def _slice_charts(
    content: ReportContent, per: dict[str, DatasetNumbers], colours, room: int
) -> list[Slide]:
    """One slice chart per dataset (datasets with the worst slices first), of the column of
    model A's worst slice (else the first column), its values with the most queries."""
    order = sorted(
        (n for n in content.datasets if not per[n].slice_summary.empty),
        key=lambda n: (
            float(per[n].worst_slices["gap"].min()) if not per[n].worst_slices.empty else 0.0
        ),
    )
    slides = []
    for name in order[: max(room, 0)]:
        num = per[name]
        parts = dict(slice_columns_of(num.slice_summary))
        column = next(iter(parts))
        text = f"{name}: {num.metric} by slice"
        if not num.worst_slices.empty and shows_below(num.worst_slices.iloc[0]):
            w = num.worst_slices.iloc[0]
            text += f"; A is lowest on {w['slice']} = {w['value']} ({fmt(w['mean'])})"
            column = str(w["slice"]) if str(w["slice"]) in parts else column
        summary = _top_values(parts[column], 7)
        slides.append(
            _figure_slide(
                f"slices-{slug(name)}",
                text,
                slice_figure(summary, name, num.metric, colours),
                note=f"{column}: the values with the most queries (at least 10 each); error "
                "bars: 95% bootstrap CI.",
            )
        )
    return slides


def _top_values(summary: pd.DataFrame, n: int) -> pd.DataFrame:
    """The rows of the ``n`` slice values with the most queries (readable on one slide), in
    the summary's (natural) order."""
    sizes = summary.groupby("value", sort=False)["n"].max().sort_values(ascending=False)
    return summary.loc[summary["value"].isin(sizes.index[:n])]


def build_deck(content: ReportContent, *, max_slides: int = MAX_SLIDES) -> list[Slide]:
    """The slides of ``content`` (see the module docstring), at most ``max_slides``."""
    per: dict[str, DatasetNumbers] = content.per_dataset  # type: ignore[assignment]
    if not content.datasets or not per:
        return [
            Slide(
                "empty",
                "Nothing to report for this selection",
                "table",
                table=pd.DataFrame({"datasets": ["none with per-query results"]}),
            )
        ]
    models = list(dict.fromkeys(m for n in content.datasets for m in per[n].board["model"]))
    colours = {**model_colours(models), **content.colours}
    causes = _causes(content)
    slides = [
        _overview(content, per),
        _leaderboard(content, per, colours),
        _significance(content),
        _worst_slices(content, per),
        _slice_deltas(content),
        causes,
    ]
    deck = [s for s in slides if s is not None] + _example_slides(content)
    beyond = _beyond(content)
    if beyond is not None and len(deck) < max_slides:  # only where the budget has room
        deck.append(beyond)
    deck += _slice_charts(content, per, colours, max_slides - len(deck))
    return deck[:max_slides]
