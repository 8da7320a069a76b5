"""Published summaries beside a run: the means an evaluator wrote, found and read.

Files recognised as the summary of a run file ``<folder>/<stem>.<ext>``:

* ``eval_metrics_<split>.json`` beside ``eval_results_<split>.csv`` (STaRK's ``eval.py`` writes
  both into one folder): a flat JSON object ``{metric: mean}``; its split is ``<split>``;
* ``<stem>.metrics.json`` of the same shape (a bundle written by ``import stark`` keeps the
  summary it found beside a run this way, with ``source``, ``split``, ``identical_to`` and
  ``run_file_means`` keys and the means under ``metrics``); ``<stem>`` is the run file's name
  without its extension (``gpt-3.5.parquet`` -> ``gpt-3.5``, ``.gz`` dropped first), else the
  name up to its first dot (``bm25.run.gz`` -> ``bm25``) unless another file of the folder has
  that stem (``gpt-3.metrics.json`` is ``gpt-3.parquet``'s summary, not ``gpt-3.5.parquet``'s);
* ``metrics.json`` of the same shape, when it is the folder's only summary and the run is the
  folder's only run file;
* a row of a leaderboard CSV (``leaderboard*.csv`` in the run's folder or the one above it): a
  column ``model``, ``method``, ``name``, ``run`` or ``retriever`` naming the row, one column
  per metric; the row whose name is the model's or the run file's stem (as above), case
  ignored.

Metric keys are read as the evaluator names them (``hit@1``, ``Recall@20``, ``MRR``, STaRK's
``rprecision``); keys that are no metric, values that are not finite numbers (text, booleans,
``null``, ``NaN``, ``Infinity``, a number too large for a float) and keys that give one metric
two different values (``"hit@1"`` twice, or ``hit@1`` and ``Hit@1``) are kept aside, as "not
compared". A summary whose values exceed 1, none of them above 100, is read as percentages
(every built-in metric lies in [0, 1]). Each value keeps the precision it was printed with:
``0.2857`` stands for anything in [0.28565, 0.28575], a percentage ``28`` for [27.5, 28.5];
a fraction printed without decimals (``0``, ``1``: every query missed, every query hit) is
exact.

Only regular files of at most 1 MiB are read, and only when they lie in the folder they are
found in: a FIFO, a device, a folder named like a summary, or a symbolic link to a file
elsewhere (outside a bundle, say) is no summary. Of a leaderboard, the row naming the model
exactly is taken, else the one row naming it in another case; several such rows are no summary.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core.names import parse_metric
from analysis.io._text import check_json_depth, decode

MAX_BYTES = 1 << 20  # a summary is a few hundred bytes; larger files are not summaries
NAME_COLUMNS = ("model", "method", "name", "run", "retriever")
ALIASES = {"rprecision": "rprec", "r-precision": "rprec", "r_precision": "rprec"}
RUN_NAME = re.compile(r"^eval_results_(?P<split>.+)\.csv(\.gz)?$")
STARK_SUMMARY = re.compile(r"^eval_metrics_(?P<split>.+)\.json$")
SUMMARY_SUFFIX = ".metrics.json"
MAX_WALK = 5000  # directory entries visited when looking for other summaries


@dataclass(frozen=True)
class Summary:
    """One published summary.

    Attributes:
        path: the file.
        means: canonical metric name -> (mean as a fraction, half a unit of its last printed
            digit).
        split: the split it names (``eval_metrics_<split>.json``), else None.
        digest: SHA-256 of the file's bytes (of the original for an imported copy).
        ignored: its keys that are no metric.
        percent: its values were percentages.
        source: for a copy kept by ``import stark``, the file it was copied from.
        identical_to: files found with the same bytes when it was imported.
        run_file_means: means of the run file's own per-query columns (STaRK ``eval_results``),
            kept by ``import stark``.
        row: the leaderboard row it was read from.
    """

    path: Path
    means: dict[str, tuple[float, float]]
    split: str | None = None
    digest: str = ""
    ignored: tuple[str, ...] = ()
    percent: bool = False
    source: str | None = None
    identical_to: tuple[str, ...] = ()
    run_file_means: dict[str, float] = field(default_factory=dict)
    row: str | None = None

    @property
    def name(self) -> str:
        """How messages name it: the original file of an imported copy, else the path (and the
        leaderboard row)."""
        where = self.source or str(self.path)
        return f"{where} (row {self.row})" if self.row else where


class _Number(float):
    """A parsed JSON number that remembers how many decimals it was printed with."""

    decimals: int


def _number(text: str) -> _Number:
    value = _Number(text)
    mantissa, _, exponent = text.lower().partition("e")
    decimals = len(mantissa.partition(".")[2]) - (int(exponent) if exponent else 0)
    value.decimals = max(decimals, 0)
    return value


def canonical_metric(key: str) -> str | None:
    """The canonical name of an evaluator's metric key (``Recall@20`` -> ``recall@20``,
    ``rprecision`` -> ``rprec``), None for a key that is no metric."""
    key = str(key).strip()
    key = ALIASES.get(key.lower(), key)
    try:
        return parse_metric(key).name
    except ValueError:
        return None


def _finite(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _values(
    pairs: Sequence[tuple[str, object]],
) -> tuple[dict[str, tuple[float, float]], tuple, bool]:
    """(canonical metric -> (value, printed tolerance), keys not compared, percentages) of the
    ``(key, value)`` pairs of a flat summary, in order (module docstring)."""
    found: dict[str, tuple[float, float]] = {}
    keys: dict[str, list[str]] = {}
    conflict: set[str] = set()
    ignored = []
    for key, value in pairs:
        name = canonical_metric(key)
        if name is None or not _finite(value):
            ignored.append(str(key))
            continue
        decimals = getattr(value, "decimals", 0 if isinstance(value, int) else 17)
        entry = (float(value), 0.5 * 10.0**-decimals)
        if name in found and found[name][0] != entry[0]:
            conflict.add(name)
        found.setdefault(name, entry)
        keys.setdefault(name, []).append(str(key))
    for name in conflict:
        del found[name]
        ignored += keys[name]
    percent = any(v > 1 for v, _ in found.values()) and all(v <= 100 for v, _ in found.values())
    if percent:
        found = {k: (v / 100, t / 100) for k, (v, t) in found.items()}
    else:  # a fraction printed without decimals is 0 or 1 exactly, not a rounded value
        found = {k: (v, 0.0 if t >= 0.5 else t) for k, (v, t) in found.items()}
    return found, tuple(ignored), percent


class _Object(dict):
    """A JSON object that keeps its ``(key, value)`` pairs (a key may appear twice)."""

    pairs: list[tuple[str, object]]


def _object(pairs: list[tuple[str, object]]) -> _Object:
    out = _Object(pairs)
    out.pairs = pairs
    return out


def small_file(path: Path) -> bytes | None:
    """The bytes of ``path`` when it is a regular file of at most :data:`MAX_BYTES` that lies in
    its own folder (module docstring), else None; never blocks on a FIFO."""
    try:
        if not path.resolve().is_relative_to(path.parent.resolve()):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError, RuntimeError):  # missing, unreadable, a symlink loop
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError:
            return None
    return data if len(data) <= MAX_BYTES else None


def _json(path: Path) -> tuple[object, bytes] | None:
    data = small_file(path)
    if data is None:
        return None
    try:
        text = decode(data, path)
        check_json_depth(text, path)
        parsed = json.loads(text, parse_float=_number, parse_int=_number, object_pairs_hook=_object)
    except (ValueError, RecursionError):  # InputError is a ValueError: not a summary
        return None
    return parsed, data


def _text(value: object) -> str | None:
    """A string or number as one line of printable text, else None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value)
    return text if text.isprintable() else None


def _wrapped_fields(data: dict) -> dict:
    """The keys ``import stark`` adds around the means, each kept only when well-formed."""
    means = data.get("run_file_means")
    means = means if isinstance(means, dict) else {}
    same = data.get("identical_to")
    same = same if isinstance(same, list) else []
    return {
        "split": _text(data.get("split")) or None,
        "digest": _text(data.get("digest")) or "",
        "source": _text(data.get("source")) or None,
        "identical_to": tuple(t for x in same if isinstance(x, str) and (t := _text(x))),
        "run_file_means": {str(k): float(v) for k, v in means.items() if _finite(v)},
    }


def read_summary(path: str | Path) -> Summary | None:
    """A JSON summary (flat ``{metric: mean}``, or the wrapped form ``import stark`` writes);
    None when the file is no summary (not JSON, no metric key, too large, not a regular file of
    its folder: module docstring)."""
    p = Path(path)
    found = _json(p)
    if found is None or not isinstance(found[0], _Object):
        return None
    data, raw = found
    wrapped = isinstance(data.get("metrics"), _Object)
    body = data["metrics"] if wrapped else data
    values, ignored, percent = _values(body.pairs)
    if not values:
        return None
    match = STARK_SUMMARY.match(p.name)
    split = match.group("split") if match else None
    if not wrapped:
        return Summary(p, values, split, hashlib.sha256(raw).hexdigest(), ignored, percent)
    fields = _wrapped_fields(data)
    fields["split"] = fields["split"] or split
    return Summary(p, values, ignored=ignored, percent=percent, **fields)


def wrapped(summary: Summary, source: str, identical_to: tuple[str, ...], means: dict) -> dict:
    """The JSON object ``import stark`` writes as ``<model>.metrics.json`` in a bundle: the
    summary's means (as read, before any percent scaling, each rounded to the decimals it was
    printed with, so that reading it again gives the same values and precision: ``58.33`` read
    as a percentage and scaled back is ``58.32999999999999``, ``28`` is ``28.000000000000004``),
    where it came from, the files it was identical to and the means of the run file's own
    per-query columns."""
    scale = 100.0 if summary.percent else 1.0
    return {
        "source": source,
        "split": summary.split,
        "digest": summary.digest,
        "identical_to": list(identical_to),
        "run_file_means": {k: float(v) for k, v in means.items()},
        "metrics": {k: _as_printed(v * scale, t * scale) for k, (v, t) in summary.means.items()},
    }


def _as_printed(value: float, printed: float) -> float | int:
    """``value`` rounded to the decimals whose half unit is ``printed`` (an int for none; an
    exact value, ``printed`` 0, as it is)."""
    if printed <= 0:
        return round(value) if value.is_integer() else value
    decimals = round(-math.log10(2 * printed))
    if decimals >= 17:
        return value
    return round(value) if decimals <= 0 else round(value, decimals)


def _leaderboard_row(path: Path, names: Sequence[str]) -> Summary | None:
    """The row of the leaderboard CSV ``path`` naming one of ``names`` (module docstring)."""
    data = small_file(path)
    if data is None:
        return None
    try:
        rows = list(csv.reader(io.StringIO(decode(data, path), newline="")))
    except (ValueError, csv.Error):
        return None
    if not rows:
        return None
    header = [h.strip() for h in rows[0]]
    key = next((i for i, h in enumerate(header) if h.lower() in NAME_COLUMNS), None)
    if key is None:
        return None
    lower = {n.lower() for n in names}
    matching = [r for r in rows[1:] if len(r) == len(header) and r[key].strip().lower() in lower]
    exact = [r for r in matching if r[key].strip() in names]
    chosen = exact if exact else matching
    if len(chosen) != 1:  # none, or ambiguous
        return None
    row = chosen[0]
    pairs: list[tuple[str, object]] = []
    for h, cell in zip(header, row, strict=True):
        try:
            pairs.append((h, _number(cell.strip())))
        except ValueError:
            continue
    values, ignored, percent = _values(pairs)
    if not values:
        return None
    digest = hashlib.sha256(",".join(row).encode()).hexdigest()
    return Summary(path, values, None, digest, ignored, percent, row=row[key].strip())


def is_summary_file(path: Path) -> bool:
    """Whether ``path`` is named as a summary (STaRK's ``eval_metrics_*.json``,
    ``*.metrics.json``, ``metrics.json``, ``leaderboard*.csv``): a file no run is read from."""
    name = path.name.lower()
    return bool(
        STARK_SUMMARY.match(name)
        or name.endswith(SUMMARY_SUFFIX)
        or name == "metrics.json"
        or (name.startswith("leaderboard") and name.endswith(".csv"))
    )


def summary_paths(run: str | Path) -> list[Path]:
    """The existing files that may hold a summary of the run file ``run`` (module docstring),
    without reading them: what a cache of the run's audit depends on."""
    p = Path(run)
    return [*_named_paths(p), *(f for w in (p.parent, p.parent.parent) for f in _leaderboards(w))]


def summary_paths_of(runs: Iterable[str | Path]) -> list[Path]:
    """:func:`summary_paths` of several run files, each once, a folder's leaderboards listed
    once (not once per run file in it)."""
    boards: dict[Path, list[Path]] = {}
    out: list[Path] = []
    for run in runs:
        p = Path(run)
        out += _named_paths(p)
        for where in (p.parent, p.parent.parent):
            if where not in boards:
                boards[where] = _leaderboards(where)
            out += boards[where]
    return list(dict.fromkeys(out))


def _named_paths(run: Path) -> list[Path]:
    """The existing JSON summaries named after the run file ``run`` (module docstring)."""
    folder = run.parent
    match = RUN_NAME.match(run.name)
    named = [folder / f"eval_metrics_{match.group('split')}.json"] if match else []
    named += [folder / f"{stem}{SUMMARY_SUFFIX}" for stem in _stems(run)[:1]]
    named.append(folder / "metrics.json")
    return [f for f in named if f.is_file()]


def _leaderboards(folder: Path) -> list[Path]:
    """The leaderboard CSVs of ``folder``, in name order."""
    return sorted(f for f in folder.glob("leaderboard*.csv") if f.is_file())


def _whole_stem(name: str) -> str:
    """A file name without its extension (``.gz`` dropped first)."""
    base = name.removesuffix(".gz").removesuffix(".GZ")
    return base.rpartition(".")[0] or base


def _stems(run: Path) -> list[str]:
    """The stems of the run file's ``<stem>.metrics.json`` that exist, in order (module
    docstring): the name without its extension, then up to its first dot."""
    whole, first = _whole_stem(run.name), run.name.split(".")[0]
    found = [whole] if (run.parent / f"{whole}{SUMMARY_SUFFIX}").is_file() else []
    if first == whole or not (run.parent / f"{first}{SUMMARY_SUFFIX}").is_file():
        return found
    return found if _another_has_stem(run, first) else [*found, first]


def _another_has_stem(run: Path, stem: str) -> bool:
    """Another file of the run's folder, no summary, is ``stem`` plus one extension."""
    try:
        return any(
            f.name != run.name and not is_summary_file(f) and _whole_stem(f.name) == stem
            for f in run.parent.iterdir()
        )
    except OSError:
        return False


def _row_names(run: Path, model: str | None) -> list[list[str]]:
    """The names a leaderboard row of the run may have, in the order tried: the file name
    without its extension and the model, then the name up to its first dot unless that is
    another file's stem (as for ``<stem>.metrics.json``)."""
    whole, first = _whole_stem(run.name), run.name.split(".")[0]
    names = [[whole, *([model] if model else [])]]
    if first != whole and not _another_has_stem(run, first):
        names.append([first])
    return names


def summaries_beside(run: str | Path, model: str | None = None) -> list[Summary]:
    """The summaries of the run file ``run`` (module docstring), in that order."""
    p = Path(run)
    names = _row_names(p, model)
    out: list[Summary] = []
    for path in summary_paths(p):
        if path.suffix == ".csv":
            rows = (_leaderboard_row(path, group) for group in names)
            found = next((row for row in rows if row is not None), None)
        elif path.name == "metrics.json" and not _alone(p):
            continue
        else:
            found = read_summary(path)
        if found is not None:
            out.append(found)
    return out


def _alone(run: Path) -> bool:
    """The run is the only run-like file of its folder (summaries and dotfiles aside)."""
    siblings = [
        f
        for f in run.parent.iterdir()
        if f.is_file() and not f.name.startswith(".") and not is_summary_file(f)
        and not f.name.endswith((".json", ".md", ".txt.lock", ".log"))
    ]  # fmt: skip
    return siblings == [run]


def search_root(run: str | Path) -> Path:
    """Where other summaries of the same collection live: above the ``runs`` folder holding
    ``run`` (its parent's parent: the folder of every domain or dataset), else the run's own
    folder."""
    p = Path(run).resolve()
    for parent in p.parents:
        if parent.name == "runs":
            return parent.parent.parent
    return p.parent


def _walk(root: Path, depth: int = 5) -> Iterator[Path]:
    """Summary-named JSON files under ``root`` (at most ``depth`` levels, :data:`MAX_WALK`
    entries, hidden folders and symbolic links skipped)."""
    seen = 0
    stack = [(root, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > MAX_WALK:
                return
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False) and level < depth:
                stack.append((path, level + 1))
            elif (
                entry.is_file(follow_symlinks=False)
                and path.suffix == ".json"
                and is_summary_file(path)
            ):
                yield path


def nearby_summaries(run: str | Path, exclude: Path | None = None) -> list[Summary]:
    """Other JSON summaries of the collection ``run`` belongs to (:func:`search_root`), to tell
    a copied file."""
    out = []
    for path in _walk(search_root(run)):
        if exclude is not None and _same(path, exclude):
            continue
        if (found := read_summary(path)) is not None:
            out.append(found)
    return out


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False
