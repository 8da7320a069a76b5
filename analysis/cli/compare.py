"""``compare``: paired statistics of two or more runs on the same qrels.

``python -m analysis compare --qrels Q --run A --run B [--run C ...] [--metrics ...] [--split FILE]
[--ties ...] [--out FILE]``: one row per pair of runs and metric (columns of
:mod:`analysis.stats.runs`), written as CSV, Markdown, LaTeX or JSON by the extension of
``--out`` (atomically); a Markdown table goes to stdout. Run names are the file stems (made
unique). With three or more runs, Markdown and LaTeX also carry a ranx-style table: each run gets
a letter, and each mean lists the letters of the runs it beats significantly (Holm-adjusted
randomization p < 0.05). Randomization p-values at their floor print as ``< 1/(B+1)``.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.errors import InputError
from analysis.core.names import DEFAULT_METRICS, TIE_POLICIES

if TYPE_CHECKING:
    import pandas as pd

NAMES = ("compare",)
FORMATS = (".csv", ".md", ".tex", ".json")
ALPHA = 0.05


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("compare", help="paired statistics of two or more runs on the same qrels")
    cmd.add_argument("--qrels", required=True, help="qrels (TREC qrels, STaRK QA CSV, table)")
    cmd.add_argument("--run", action="append", required=True, help="a run file (give 2 or more)")
    cmd.add_argument("--metrics", default=",".join(DEFAULT_METRICS), help="comma-separated metrics")
    cmd.add_argument("--split", help="evaluate only the query ids of this file (one per line)")
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--relevance-threshold", type=int, default=1, help="relevant means relevance >= this"
    )
    cmd.add_argument("--resamples", type=int, default=10_000, help="bootstrap/randomization B")
    cmd.add_argument("--seed", type=int, default=0, help="seed of the resampling")
    cmd.add_argument("--out", help="output file: .csv, .md, .tex or .json")


def _names(paths: list[str]) -> list[str]:
    """Run names: file stems (``.gz`` and the run suffix removed), numbered when they repeat."""
    from analysis.io.bundle import _model_name

    stems = [_model_name(Path(p)) for p in paths]
    out = []
    for i, stem in enumerate(stems):
        out.append(stem if stems.count(stem) == 1 else f"{stem}#{stems[: i + 1].count(stem)}")
    return out


def run(args: argparse.Namespace) -> int:
    from analysis.cli.evaluate import _load_qrels_columns, _load_run_columns
    from analysis.core.metrics import evaluate_arrays, parse_metrics
    from analysis.io.stark import read_split_ids
    from analysis.stats.runs import compare_per_query

    if len(args.run) < 2:
        raise InputError("--run", None, "compare needs at least two runs (--run A --run B)")
    try:
        metrics = [m.label for m in parse_metrics(args.metrics)]
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    if args.resamples < 1:
        raise InputError("--resamples", None, "must be at least 1")
    out = Path(args.out) if args.out else None
    if out is not None:
        from analysis.io.atomic import refuse_overwrite

        refuse_overwrite(out, [*args.run, args.qrels, *([args.split] if args.split else [])])
        if out.suffix.lower() not in FORMATS:
            raise InputError(out, None, f"unknown output format (use {', '.join(FORMATS)})")
    split = read_split_ids(args.split) if args.split else None
    qrels = _load_qrels_columns(args.qrels)
    names = _names(args.run)
    values = {}
    notes: list[str] = []
    for name, path in zip(names, args.run, strict=True):
        _, columns, warnings, _ = evaluate_arrays(
            *_load_run_columns(path, args.ties), qrels, metrics, ties=args.ties,
            relevance_threshold=args.relevance_threshold, split=split,
        )  # fmt: skip
        values[name] = {m: columns[m] for m in metrics}
        notes += [f"{name}: {w}" for w in warnings]
    table = compare_per_query(values, metrics, n_resamples=args.resamples, seed=args.seed)
    print(to_markdown(table, names, metrics))
    for note in notes:
        print(note)
    if out is not None:
        from analysis.cli._output import atomic_write_text

        text = render(table, names, metrics, out.suffix.lower())
        atomic_write_text(out, text)
    return 0


def _p(value: float, bound: bool) -> str:
    from analysis.stats.paired import format_p

    return format_p(value, bound=bool(bound), digits=3)


def _num(value: float) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "n/a" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
    return f"{value:.4f}" if isinstance(value, float) else str(value)


def _display_rows(table: pd.DataFrame) -> list[list[str]]:
    rows = []
    for r in table.to_dict("records"):
        rows.append(
            [
                r["metric"], r["a"], r["b"], str(r["n"]), _num(r["mean_a"]), _num(r["mean_b"]),
                _num(r["delta"]), _num(r["ci_low"]), _num(r["ci_high"]), str(r["wins"]),
                str(r["ties"]), str(r["losses"]), _p(r["p_t"], False),
                _p(r["p_wilcoxon"], False), _p(r["p_randomization"], r["p_floor"]),
                _num(r["d_z"]), _p(r["p_holm"], r["p_holm_bound"]),
            ]
        )  # fmt: skip
    return rows


def _letter_rows(table: pd.DataFrame, names: list[str], metrics: list[str]) -> list[list[str]]:
    from analysis.stats.runs import significance_letters

    rows = []
    for r in significance_letters(table, names, metrics, ALPHA).to_dict("records"):
        cells = [f"{_num(r[m][0])}{('^' + r[m][1]) if r[m][1] else ''}" for m in metrics]
        rows.append([r["letter"], r["run"], *cells])
    return rows


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*").replace("_", "\\_")


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |"]
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(table: pd.DataFrame, names: list[str], metrics: list[str]) -> str:
    """The pairwise table as Markdown, preceded by the ranx-style letters for 3+ runs."""
    from analysis.stats.runs import COLUMNS

    parts = []
    if len(names) >= 3:
        parts.append(_md_table(["", "run", *metrics], _letter_rows(table, names, metrics)))
        parts.append(
            f"^x: better than run x (Holm-adjusted randomization p < {ALPHA:g}, over every row)."
        )
    parts.append(_md_table(list(COLUMNS), _display_rows(table)))
    return "\n\n".join(parts) + "\n"


_TEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"$<$"}  # fmt: skip


def _tex_escape(text: str) -> str:
    out = text.replace("\\", "\x00")
    for char, repl in _TEX.items():
        out = out.replace(char, repl)
    return out.replace("\x00", r"\textbackslash{}")


def _tex_table(header: list[str], rows: list[list[str]], sup: bool = False) -> str:
    def cell(text: str) -> str:
        if sup and "^" in text:
            value, tags = text.split("^", 1)
            return f"{_tex_escape(value)}$^{{{_tex_escape(tags)}}}$"
        return _tex_escape(text)

    lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\hline"]
    lines.append(" & ".join(_tex_escape(h) for h in header) + r" \\ \hline")
    lines += [" & ".join(cell(c) for c in row) + r" \\" for row in rows]
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines)


def render(table: pd.DataFrame, names: list[str], metrics: list[str], suffix: str) -> str:
    """The output file's text for ``.csv``, ``.md``, ``.tex`` or ``.json``."""
    from analysis.stats.runs import COLUMNS, EXTRA_COLUMNS

    if suffix == ".csv":
        from analysis.io.csvsafe import neutralize_frame

        return neutralize_frame(table[[*COLUMNS, *EXTRA_COLUMNS]]).to_csv(index=False)
    if suffix == ".json":
        records = table[[*COLUMNS, *EXTRA_COLUMNS]].to_dict("records")
        clean = [
            {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
             for k, v in r.items()}
            for r in records
        ]  # fmt: skip
        return json.dumps(clean, indent=2, default=_json_value) + "\n"
    if suffix == ".md":
        return to_markdown(table, names, metrics)
    parts = []
    if len(names) >= 3:
        parts.append(
            _tex_table(["", "run", *metrics], _letter_rows(table, names, metrics), sup=True)
        )
    parts.append(_tex_table(list(COLUMNS), _display_rows(table)))
    return "\n\n".join(parts) + "\n"


def _json_value(value: object) -> object:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {value!r}")
