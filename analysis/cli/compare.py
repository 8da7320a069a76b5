"""``compare``: paired statistics of two or more runs on the same qrels.

``python -m analysis compare --qrels Q --run [NAME=]A --run [NAME=]B [--run C ...] [--group
NAME=RUN,RUN,...] [--folds NAME=RUN,RUN,...] [--metrics ...] [--split FILE] [--ties ...] [--out
FILE] [--per-query FILE]``:
one row per pair of runs and metric (columns of :mod:`analysis.stats.runs`), written as CSV,
Markdown, LaTeX or JSON by the extension of ``--out`` (atomically); a Markdown table goes to
stdout. Run names are given (``NAME=PATH``) or the file stems (made unique). A ``--group`` is
one model trained with several seeds: its runs are compared as one entry, by their per-query
seed means (``seeds_a``/``seeds_b`` say how many seeds), not one by one. A ``--folds`` group is
one cross-validated model, a run per fold over that fold's queries: its runs are pooled into one
(each query scored by the run of its fold; runs of two folds answering one query is an error)
and compared on every query, its fold runs not on their own. ``--per-query FILE``
writes ``query_id, metric, a, b, value_a, value_b, delta, summary`` for every pair, metric and
query, ``summary`` being the written diff of the two rankings
(:mod:`analysis.present.diffsummary`; a seed group's rankings are its first seed's, a fold
group's those of each query's fold). With three or
more runs, Markdown and LaTeX also carry a ranx-style table: each run gets
a letter, and each mean lists the letters of the runs it beats significantly (Holm-adjusted
randomization p < 0.05). Randomization p-values at their floor print as ``< 1/(B+1)``.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.core.errors import InputError
from analysis.core.names import DEFAULT_METRICS, TIE_POLICIES

if TYPE_CHECKING:
    import pandas as pd

NAMES = ("compare",)
FORMATS = (".csv", ".md", ".tex", ".json")
ALPHA = 0.05
#: The most resamples ``--resamples`` accepts: a BCa interval (below 100 queries) holds a
#: ``(B, n)`` index matrix, 0.8 GB at B = 1,000,000 and n = 99.
MAX_RESAMPLES = 1_000_000


def add_parsers(sub: argparse._SubParsersAction) -> None:
    cmd = sub.add_parser("compare", help="paired statistics of two or more runs on the same qrels")
    cmd.add_argument("--qrels", required=True, help="qrels (TREC qrels, STaRK QA CSV, table)")
    cmd.add_argument(
        "--run",
        action="append",
        required=True,
        metavar="[NAME=]PATH",
        help="a run file, optionally named (give 2 or more; default name: the file name)",
    )
    cmd.add_argument(
        "--group",
        action="append",
        default=[],
        metavar="NAME=RUN,RUN,...",
        help="runs of one model trained with several seeds (run names), compared by their "
        "per-query seed means; repeat it for more groups",
    )
    cmd.add_argument(
        "--folds",
        action="append",
        default=[],
        metavar="NAME=RUN,RUN,...",
        help="runs of one cross-validated model, one per fold over the fold's queries (run "
        "names), pooled into one run and compared on every query; repeat it for more models",
    )
    cmd.add_argument("--metrics", default=",".join(DEFAULT_METRICS), help="comma-separated metrics")
    cmd.add_argument("--split", help="evaluate only the query ids of this file (one per line)")
    cmd.add_argument("--ties", choices=TIE_POLICIES, default="trec_eval", help="tie policy")
    cmd.add_argument(
        "--relevance-threshold", type=int, default=1, help="relevant means relevance >= this"
    )
    cmd.add_argument(
        "--resamples",
        type=int,
        default=10_000,
        help=f"bootstrap/randomization B (10000; at most {MAX_RESAMPLES:,})",
    )
    cmd.add_argument("--seed", type=int, default=0, help="seed of the resampling (>= 0)")
    cmd.add_argument("--out", help="output file: .csv, .md, .tex or .json")
    cmd.add_argument(
        "--per-query",
        metavar="FILE",
        help="also write one row per query, pair and metric with a written diff of the two "
        "rankings (.csv or .parquet)",
    )


def _names(paths: list[str]) -> list[str]:
    """Run names: file stems (``.gz`` and the run suffix removed), numbered when they repeat."""
    from analysis.io.bundle import _model_name

    stems = [_model_name(Path(p)) for p in paths]
    out = []
    for i, stem in enumerate(stems):
        out.append(stem if stems.count(stem) == 1 else f"{stem}#{stems[: i + 1].count(stem)}")
    return out


def _runs(given: list[str]) -> dict[str, str]:
    """``--run`` values -> ``{name: path}``: ``NAME=PATH`` keeps its name (an existing file
    whose name holds ``=`` is a path), a bare path gets :func:`_names`' name.

    Raises:
        InputError: an empty name or path, a name given twice.
    """
    named: list[tuple[str | None, str]] = []
    for text in given:
        name, sep, path = text.partition("=")
        if sep and not Path(text).is_file():
            if not name.strip() or not path.strip():
                raise InputError("--run", None, f"{text!r}: expected PATH or NAME=PATH")
            named.append((name, path))
        else:
            named.append((None, text))
    bare = iter(_names([p for n, p in named if n is None]))
    out: dict[str, str] = {}
    for name, path in named:
        key = name if name is not None else next(bare)
        if key in out:
            raise InputError("--run", None, f"run name {key!r} is given twice")
        out[key] = path
    return out


def _groups(
    given: list[str], runs: dict[str, str], option: str = "--group", taken: dict | None = None
) -> dict[str, list[str]]:
    """``--group``/``--folds`` ``NAME=RUN,RUN,...`` values -> ``{name: [run, ...]}``;
    ``taken``: the groups already parsed (a name or a run is in one group at most).

    Raises:
        InputError: not NAME=RUN,RUN, fewer than two runs, an unknown run, a name taken, a run
            already in a group.
    """
    out: dict[str, list[str]] = {}
    owner = {m: g for g, ms in (taken or {}).items() for m in ms}
    for text in given:
        name, sep, rest = text.partition("=")
        members = [m.strip() for m in rest.split(",") if m.strip()]
        if not sep or not name.strip() or len(set(members)) < 2:
            raise InputError(option, None, f"{text!r}: expected NAME=RUN,RUN,... (2+ runs)")
        unknown = [m for m in members if m not in runs]
        if unknown:
            known = ", ".join(runs)
            raise InputError(option, None, f"{text!r}: no run named {unknown[0]!r} ({known})")
        if name in runs or name in out or name in (taken or {}):
            raise InputError(option, None, f"{text!r}: the name {name!r} is already taken")
        twice = [m for m in members if m in owner]
        if twice:
            raise InputError(option, None, f"{text!r}: run {twice[0]!r} is already in group "
                                           f"{owner[twice[0]]!r}")  # fmt: skip
        out[name] = list(dict.fromkeys(members))
        owner.update(dict.fromkeys(out[name], name))
    return out


def _sources(runs: dict[str, str], folds: dict[str, list[str]]) -> dict[str, list[str]]:
    """What is evaluated: each run not in a fold group (its path), and each fold group (its
    runs' paths, pooled), at the place of its first run."""
    owner = {m: g for g, ms in folds.items() for m in ms}
    out: dict[str, list[str]] = {}
    for name, path in runs.items():
        group = owner.get(name)
        if group is None:
            out[name] = [path]
        elif group not in out:
            out[group] = [runs[m] for m in folds[group]]
    return out


def _check_out(args: argparse.Namespace, runs: dict[str, str]) -> None:
    from analysis.io.atomic import refuse_overwrite

    inputs = [*runs.values(), args.qrels, *([args.split] if args.split else [])]
    out = Path(args.out) if args.out else None
    if out is not None:
        refuse_overwrite(out, inputs)
        if out.suffix.lower() not in FORMATS:
            raise InputError(out, None, f"unknown output format (use {', '.join(FORMATS)})")
    if args.per_query:
        per = Path(args.per_query)
        refuse_overwrite(per, inputs)
        if per.suffix.lower() not in (".csv", ".parquet"):
            raise InputError(per, None, "unknown output format (use .csv or .parquet)")
        if out is not None and per.resolve() == out.resolve():
            raise InputError(per, None, "--per-query and --out name the same file")


def run(args: argparse.Namespace) -> int:
    from analysis.cli.evaluate import _load_qrels_columns
    from analysis.io.stark import read_split_ids
    from analysis.stats.runs import compare_per_query, distinct_metrics, seed_matrices, seed_means

    runs = _runs(args.run)
    if len(runs) < 2:
        raise InputError("--run", None, "compare needs at least two runs (--run A --run B)")
    groups = _groups(args.group, runs)
    folds = _groups(args.folds, runs, "--folds", groups)
    sources = _sources(runs, folds)
    try:
        metrics = distinct_metrics(args.metrics)
    except ValueError as exc:
        raise InputError("--metrics", None, str(exc)) from None
    if not 1 <= args.resamples <= MAX_RESAMPLES:
        raise InputError(
            "--resamples", None, f"must be from 1 to {MAX_RESAMPLES:,}, got {args.resamples}"
        )
    if args.seed < 0:
        raise InputError("--seed", None, f"must be a non-negative integer, got {args.seed}")
    _check_out(args, runs)
    split = read_split_ids(args.split) if args.split else None
    qrels = _load_qrels_columns(args.qrels)
    ids, values, notes = _evaluate(args, sources, metrics, split, qrels)
    plain = {r: {m: v[m] for m in metrics} for r, v in values.items()}
    entries, seeds = seed_means(plain, groups)
    if len(entries) < 2:
        raise InputError("--group", None, "the groups leave fewer than two models to compare")
    table = compare_per_query(entries, metrics, n_resamples=args.resamples, seed=args.seed,
                              seeds=seeds, per_seed=seed_matrices(plain, groups))  # fmt: skip
    names = list(entries)
    print(to_markdown(table, names, metrics))
    for note in [*notes, *seed_notes(table)]:
        print(note)
    bounds = _seed_bounds(values, groups, metrics) if args.per_query else {}
    _write_outputs(
        args,
        (table, names, metrics),
        lambda: per_query_rows(args, sources, groups, (ids, entries, bounds), metrics),
    )
    return 0


def _write_outputs(
    args: argparse.Namespace,
    compared: tuple[pd.DataFrame, list[str], list[str]],
    per_query: Callable[[], pd.DataFrame],
) -> None:
    """``--out`` (the ``(table, names, metrics)`` compared, rendered by its extension) and
    ``--per-query`` (the frame ``per_query()`` computes): both computed first, then written
    together (:func:`~analysis.io.atomic.atomic_write_all`), so a failure in either leaves
    neither."""
    from analysis.cli._output import frame_writer
    from analysis.io.atomic import atomic_write_all

    outputs: list[tuple[Path, Callable[[Path], None]]] = []
    if args.out:
        out = Path(args.out)
        text = render(*compared, out.suffix.lower())
        outputs.append((out, lambda tmp: tmp.write_text(text, encoding="utf-8")))
    if args.per_query:
        per = Path(args.per_query)
        outputs.append((per, frame_writer(per_query(), per)))
    atomic_write_all(outputs)


def seed_notes(table: pd.DataFrame) -> list[str]:
    """A line per row with a seed group: how many seed pairs (a seed of A, a seed of B) give
    ``mean(a - b)`` another sign than the seed means do."""
    out = []
    for r in table.loc[table["seed_pairs"] > 1].to_dict("records"):
        flips, pairs = int(r["seed_flips"]), int(r["seed_pairs"])
        said = f"{flips} of {pairs}" if flips else "none of the"
        out.append(f"{r['metric']}, {r['a']} - {r['b']}: {said} seed pairs give the difference "
                   "another sign than the seed means do.")  # fmt: skip
    return out


def _evaluate(args, sources, metrics, split, qrels) -> tuple[list[str], dict, list[str]]:
    """Every source's per-query values (a run's, or a fold group's pooled runs'; and tie
    bounds with ``--per-query``), the query ids and the data-check notes."""
    from analysis.core.metrics import evaluate_arrays

    values: dict[str, dict[str, object]] = {}
    notes: list[str] = []
    ids: list[str] = []
    for name, paths in sources.items():
        qids, columns, warnings, _ = evaluate_arrays(
            *_pooled_columns(name, paths, args.ties), qrels, metrics, ties=args.ties,
            relevance_threshold=args.relevance_threshold, split=split,
            diagnostics=bool(args.per_query),
        )  # fmt: skip
        ids = [str(q) for q in qids.to_pylist()]
        values[name] = dict(columns)
        notes += [f"{name}: {w}" for w in warnings]
    return ids, values, notes


def _pooled_columns(name: str, paths: list[str], ties: str) -> tuple:
    """A run's columns, or a fold group's runs' columns end to end (the runs answer disjoint
    queries).

    Raises:
        InputError: two fold runs that answer the same query.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from analysis.cli.evaluate import _load_run_columns

    parts = [_load_run_columns(path, ties) for path in paths]
    if len(parts) == 1:
        return parts[0]
    owner: dict[str, str] = {}
    for path, (queries, _, _) in zip(paths, parts, strict=True):
        for query in pc.unique(queries).to_pylist():
            if owner.setdefault(str(query), path) != path:
                raise InputError(path, None, f"fold group {name!r}: query {query!r} is also "
                                             f"answered by {owner[str(query)]}")  # fmt: skip

    def chunks(column: int) -> pa.ChunkedArray:
        out = []
        for part in parts:
            ids = part[column]
            for chunk in ids.chunks if isinstance(ids, pa.ChunkedArray) else [ids]:
                plain = chunk.dictionary_decode() if pa.types.is_dictionary(chunk.type) else chunk
                out.append(plain.cast(pa.large_string()))
        return pa.chunked_array(out, type=pa.large_string())

    return chunks(0), chunks(1), np.concatenate([part[2] for part in parts])


def _seed_bounds(values: dict, groups: dict, metrics: list[str]) -> dict[str, dict]:
    """Tie bounds ``<metric>_min/_max`` of every compared entry (a group's: its seeds' mean)."""
    from analysis.stats.runs import seed_means

    wanted = [f"{m}_{end}" for m in metrics for end in ("min", "max")]
    known = {r: {c: v[c] for c in wanted if c in v} for r, v in values.items()}
    if not all(len(v) == len(wanted) for v in known.values()):
        return {}
    return seed_means(known, groups)[0]


def per_query_rows(
    args: argparse.Namespace,
    sources: dict[str, list[str]],
    groups: dict[str, list[str]],
    evaluated: tuple[list[str], dict, dict],
    metrics: list[str],
) -> pd.DataFrame:
    """``query_id, metric, a, b, value_a, value_b, delta, summary`` for every pair of compared
    entries (a seed group's values are its seed means; its rankings, in the written diff,
    those of its first seed; a fold group's rankings its fold runs') and metric; the written
    diff of :mod:`analysis.present.diffsummary` with the metric's cutoff as k (10 for metrics
    without one). ``sources``: the run files of each evaluated name."""
    import itertools

    import pandas as pd

    from analysis.core.metrics import parse_metric, rank_run
    from analysis.io import load_qrels, load_run
    from analysis.present.diffsummary import query_diffs, query_summaries

    ids, entries, bounds = evaluated
    shown = {g: ms[0] for g, ms in groups.items()}
    ranked = {}
    for entry in entries:
        paths = sources[shown.get(entry, entry)]
        frames = [load_run(p) for p in paths]
        run = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        ranked[entry] = rank_run(run, args.ties)
    qrels = load_qrels(args.qrels)
    frames = []
    for a, b in itertools.combinations(entries, 2):
        diffs: dict[int, dict] = {}
        for metric in metrics:
            k = parse_metric(metric).k or 10
            if k not in diffs:
                diffs[k] = query_diffs((ranked[a], ranked[b]), qrels, ids, k=k, ties=args.ties,
                                       threshold=args.relevance_threshold)  # fmt: skip
            rows = _pair_rows(ids, metric, (a, b), entries, bounds)
            rows["summary"] = query_summaries(diffs[k], rows, metric).to_numpy()
            frames.append(rows[["query_id", "metric", "a", "b", "value_a", "value_b", "delta",
                                "summary"]])  # fmt: skip
    return pd.concat(frames, ignore_index=True)


def _pair_rows(
    ids: list[str], metric: str, pair: tuple[str, str], entries: dict, bounds: dict
) -> pd.DataFrame:
    """One pair's values of ``metric`` per query, with the tie bounds the diff reads."""
    import pandas as pd

    a, b = pair
    rows = pd.DataFrame({"query_id": ids, "metric": metric, "a": a, "b": b})
    rows["value_a"], rows["value_b"] = entries[a][metric], entries[b][metric]
    rows["delta"] = rows["value_a"] - rows["value_b"]
    for side, name in (("a", a), ("b", b)):
        for end in ("min", "max"):
            rows[f"{side}_{end}"] = bounds.get(name, {}).get(f"{metric}_{end}", float("nan"))
    return rows


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
                r["metric"], r["a"], r["b"], str(r["seeds_a"]), str(r["seeds_b"]), str(r["n"]),
                _num(r["mean_a"]), _num(r["mean_b"]),
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


def _md_table(header: list[str], rows: list[list[str]], names: tuple[int, ...]) -> str:
    """A pipe table; the cells of the columns ``names`` are run names (data text, through
    :func:`~analysis.present.escape.escape_markdown`), the others numbers and labels of ours."""
    from analysis.present.escape import escape_markdown

    def cell(j: int, text: str) -> str:
        return escape_markdown(text) if j in names else _md_escape(text)

    lines = ["| " + " | ".join(_md_escape(h) for h in header) + " |"]
    lines.append("|" + "---|" * len(header))
    lines += ["| " + " | ".join(cell(j, c) for j, c in enumerate(row)) + " |" for row in rows]
    return "\n".join(lines)


def to_markdown(table: pd.DataFrame, names: list[str], metrics: list[str]) -> str:
    """The pairwise table as Markdown, preceded by the ranx-style letters for 3+ runs."""
    from analysis.stats.runs import COLUMNS

    parts = []
    if len(names) >= 3:
        parts.append(_md_table(["", "run", *metrics], _letter_rows(table, names, metrics), (1,)))
        parts.append(
            f"^x: better than run x (Holm-adjusted randomization p < {ALPHA:g}, over every row)."
        )
    parts.append(_md_table(list(COLUMNS), _display_rows(table), (1, 2)))
    return "\n\n".join(parts) + "\n"


def _tex_table(
    header: list[str], rows: list[list[str]], names: tuple[int, ...], sup: bool = False
) -> str:
    """A tabular of text cells, each through :func:`~analysis.present.escape.escape_latex`: the
    cells of the columns ``names`` are run names (data text), the others numbers and labels of
    ours (with ``sup``, ``value^letters`` puts the letters in a superscript)."""
    from analysis.present.escape import escape_latex

    def cell(j: int, text: str) -> str:
        if sup and j not in names and "^" in text:
            value, tags = text.split("^", 1)
            return f"{escape_latex(value)}$^{{{escape_latex(tags)}}}$"
        return escape_latex(text)

    lines = [r"\begin{tabular}{" + "l" * len(header) + "}", r"\hline"]
    lines.append(" & ".join(escape_latex(h) for h in header) + r" \\ \hline")
    lines += [" & ".join(cell(j, c) for j, c in enumerate(row)) + r" \\" for row in rows]
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
            _tex_table(["", "run", *metrics], _letter_rows(table, names, metrics), (1,), sup=True)
        )
    parts.append(_tex_table(list(COLUMNS), _display_rows(table), (1, 2)))
    return "\n\n".join(parts) + "\n"


def _json_value(value: object) -> object:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"not JSON serializable: {value!r}")
