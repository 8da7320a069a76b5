"""The written summary: plain-text sentences generated from the report's numbers (names from
files are not escaped here; every renderer escapes them for its target)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from analysis.core.errors import DataWarning
from analysis.present.report.model import (
    ALPHA,
    NOTABLE_SHARE,
    NOTABLE_TIE_RANGE,
    ReportNumbers,
)
from analysis.present.report.model import fmt as _fmt
from analysis.stats.paired import p_phrase

__all__ = ["summary_sentences"]


def tied_top(part: pd.DataFrame) -> tuple[list[str], pd.DataFrame]:
    """The models sharing the best mean of a leaderboard part (``model, mean``) as it is printed
    (3 decimals: 0.1904 and 0.1897 both read 0.190, a tie), and the other rows, best first."""
    ordered = part.sort_values("mean", ascending=False, kind="stable")
    shown = ordered["mean"].map(_fmt)
    top = shown == shown.iloc[0]
    return ordered.loc[top, "model"].astype(str).tolist(), ordered.loc[~top]


def shows_below(row: Mapping[str, object]) -> bool:
    """Whether a worst-slice row (``mean``, ``overall``) reads below the overall mean as
    printed (3 decimals): a slice at 0.650 against 0.650 overall is not a worst slice to
    name, however the unrounded means compare."""
    mean, overall = float(row["mean"]), float(row["overall"])
    return mean < overall and _fmt(mean) != _fmt(overall)


def _verdict(pvalues: pd.DataFrame, name: str, metric: str, model: str) -> str:
    """ ", significant after Holm correction, p = …" or ", not significant after Holm
    correction" (a p-value that is not a finding is not printed)."""
    p = pvalues.loc[
        (pvalues["dataset"] == name) & (pvalues["metric"] == metric) & (pvalues["model"] == model),
        ["p_holm", "p_holm_bound"],
    ]
    if not len(p):
        return ""
    if p["p_holm"].iloc[0] >= ALPHA:
        return ", not significant after Holm correction"
    bound = bool(p["p_holm_bound"].iloc[0])
    return f", significant after Holm correction, {p_phrase(p['p_holm'].iloc[0], bound=bound)}"


def _best_sentence(name: str, metric: str, part: pd.DataFrame, pvalues: pd.DataFrame) -> str:
    """ "Best on …" with its CI and the runner-up, or "… a tie at 0.190 between a and b" when
    several models print the same best mean."""
    tied, rest = tied_top(part)
    top = part.loc[part["model"].astype(str) == tied[0]].iloc[0]
    ci = f"95% CI {_fmt(top['ci_low'])}–{_fmt(top['ci_high'])}, n = {int(top['n'])}"
    if len(tied) > 1:
        sentence = (
            f"Best on {name} by {metric}: a tie at {_fmt(top['mean'])} between "
            f"{_names(tied)} ({ci} for {tied[0]})"
        )
    else:
        sentence = f"Best on {name} by {metric}: {tied[0]} with {_fmt(top['mean'])} ({ci})"
    if len(rest):
        second = rest.iloc[0]
        sentence += (
            f"; runner-up {second['model']} {_fmt(second['mean'])} "
            f"({_fmt(top['mean'] - second['mean'])} behind"
            f"{_verdict(pvalues, name, metric, str(second['model']))})"
        )
    return sentence


def _names(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]


def summary_sentences(
    numbers: ReportNumbers,
    warnings: Mapping[tuple[str, str], Sequence[DataWarning]],
    model_a: str | None,
    model_b: str | None,
) -> list[str]:
    """Plain-text sentences generated from the numbers (names are not escaped here), in this
    order: the best model per dataset, A vs B (per dataset and metric, then per slice), the
    worst slice of A per dataset, the failure causes of A and B, and the data warnings."""
    out = [
        _best_sentence(name, numbers.chosen[name], part, numbers.pvalues) + "."
        for name in numbers.datasets
        if not (part := _board_part(numbers, name)).empty
    ]
    if model_a is not None and model_b is not None and not numbers.comp.empty:
        out.append(_compare_sentence(numbers.comp, model_a, model_b))
        out += _slice_delta_sentences(numbers.deltas)
    elif model_a is not None and model_b is None:
        out.append("Only one model is selected: no A vs B comparison.")
    out += _worst_slice_sentences(numbers.worst, model_a)
    for rec in numbers.causes.to_dict("records"):
        if rec["model"] in (model_a, model_b):
            out += _cause_sentences(rec)
    return out + _data_sentences(warnings)


def _board_part(numbers: ReportNumbers, name: str) -> pd.DataFrame:
    board = numbers.board
    return board.loc[(board["dataset"] == name) & (board["metric"] == numbers.chosen[name])]


def _compare_sentence(comp: pd.DataFrame, model_a: str, model_b: str) -> str:
    """How many dataset × metric differences of A and B are significant, the first six named."""
    sig = comp.loc[comp["p_holm"] < ALPHA].sort_values("p_holm", kind="stable")
    head = (
        f"A = {model_a} vs B = {model_b}: {len(sig)} of {len(comp)} dataset × metric "
        "differences are significant after Holm correction"
    )
    if len(sig):
        items = [
            f"{r['dataset']} {r['metric']} {r['delta']:+.3f} "
            f"({p_phrase(r['p_holm'], bound=bool(r['p_holm_bound']))})"
            for r in sig.head(6).to_dict("records")
        ]
        head += ": " + "; ".join(items) + ("; …" if len(sig) > 6 else "")
    return head + "."


def _slice_delta_sentences(deltas: pd.DataFrame) -> list[str]:
    """How many of the largest slice differences are significant, with the largest loss and
    gain of A among them; nothing when none is."""
    if deltas.empty:
        return []
    sig_slices = deltas.loc[deltas["p_holm"] < ALPHA].sort_values("delta", kind="stable")
    if not len(sig_slices):
        return []
    sentence = (
        f"Per slice, {len(sig_slices)} of the {len(deltas)} largest slice differences "
        "are significant after Holm correction"
    )
    extremes = []
    low, high = sig_slices.iloc[0], sig_slices.iloc[-1]
    if low["delta"] < 0:
        extremes.append(("largest loss of A", low))
    if high["delta"] > 0:
        extremes.append(("largest gain of A", high))
    sentence += "".join(
        f"; {what}: {r['dataset']} {r['slice']} = {r['value']} "
        f"({r['metric']} {r['delta']:+.3f}, n = {int(r['n'])})"
        for what, r in extremes
    )
    return [sentence + "."]


def _worst_slice_sentences(worst: Mapping[str, pd.DataFrame], model_a: str | None) -> list[str]:
    """Per dataset, A's worst slice, or that no slice reads below A's overall mean."""
    out = []
    for name, frame in worst.items():
        if frame.empty:
            continue
        r = frame.iloc[0]
        if not shows_below(r):
            out.append(
                f"No slice of {model_a} on {name} is below its overall {r['metric']} "
                f"({_fmt(r['overall'])})."
            )
            continue
        flag = " (whole CI below)" if bool(r["below"]) else ""
        out.append(
            f"Worst slice of {model_a} on {name}: {r['slice']} = {r['value']} with "
            f"{r['metric']} {_fmt(r['mean'])} vs {_fmt(r['overall'])} overall "
            f"(n = {int(r['n'])}){flag}."
        )
    return out


def _cause_sentences(rec: Mapping[str, Any]) -> list[str]:
    """The notable failure causes of one model on one dataset (a row of the causes table):
    tie dependence, duplicate coordinates, missing queries, more gold than the cutoff."""
    out = []
    who = f"{rec['model']} on {rec['dataset']}"
    n = rec["n"]
    spread = rec["mean, best tie order"] - rec["mean, worst tie order"]
    if rec["tie-dependent"] >= max(1, NOTABLE_SHARE * n) and spread >= NOTABLE_TIE_RANGE:
        out.append(
            f"Ties: {who}: {rec['metric']} depends on the order of tied scores for "
            f"{rec['tie-dependent']} of {n} queries; the mean lies between "
            f"{_fmt(rec['mean, worst tie order'])} and {_fmt(rec['mean, best tie order'])} "
            f"depending on that order (reported: {_fmt(rec['mean'])})."
        )
    failing = rec["at 0"]
    if failing and rec["of which at 0"] >= max(1, NOTABLE_SHARE * failing):
        out.append(
            f"Duplicate coordinates: {who}: in {rec['of which at 0']} of the {failing} "
            f"queries at {rec['metric']} = 0 a non-gold POI on the gold's coordinate is "
            "ranked above the gold."
        )
    if rec["missing from run"]:
        out.append(
            f"Missing: {who}: {rec['missing from run']} queries are missing from the run "
            "and count as 0."
        )
    if rec["more gold than k"] >= max(1, NOTABLE_SHARE * n):
        out.append(
            f"Caps: {who}: {rec['more gold than k']} of {n} queries have more gold documents "
            f"than the cutoff, so their {rec['metric']} cannot reach 1."
        )
    return out


def _data_sentences(warnings: Mapping[tuple[str, str], Sequence[DataWarning]]) -> list[str]:
    """One sentence per dataset with duplicate qrels rows (from its data-check warnings)."""
    dup_qrels = {}
    for (name, _model), items in warnings.items():
        for w in items:
            if w.code == "duplicate_qrels":
                dup_qrels[name] = w.count
    return [
        f"Data: {name} has duplicate qrels rows ({count}); they were collapsed "
        "(otherwise recall and nDCG would be capped below 1)."
        for name, count in dup_qrels.items()
    ]
