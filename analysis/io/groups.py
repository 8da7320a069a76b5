"""Run groups and run metadata of a bundle dataset (manifest keys ``groups`` and
``run_metadata``), and ir_metadata headers read beside a run.

A **run group** is one model evaluated several times:

* ``seeds``: the same model trained with several random seeds, each run over every query; the
  model's per-query value is the mean over its seeds (:mod:`analysis.stats.groups`);
* ``folds``: a cross-validated model, one run per fold, each over the queries of its fold; the
  model's per-query value is that of the run whose fold holds the query, and the fold is a
  slice. A fold's queries are the query ids of ``fold_queries`` (a file per fold, one id per
  line) or, without it, the queries its run answers (runs of two folds answering one query is
  an error then).

Manifest (paths relative to the bundle folder)::

    [datasets.web.groups.dense]
    seeds = ["dense-s1", "dense-s2", "dense-s3"]           # runs of the dataset, 2 or more

    [datasets.web.groups.ltr]
    folds = { f1 = "ltr-f1", f2 = "ltr-f2", f3 = "ltr-f3" }  # fold name -> its run
    fold_queries = { f1 = "web/f1.index", f2 = "web/f2.index", f3 = "web/f3.index" }

    [datasets.web.run_metadata]                             # numbers per run or group
    bm25 = { latency_ms = 4.2, index_mb = 310 }
    dense = { latency_ms = 18.0, cost = 0.8 }

A group's name must differ from every run of the dataset; its members must be runs of it. A
group without its own ``run_metadata`` entry gets, for each key every member has, the mean of
the members' values.

**ir_metadata** (Breuer et al., SIGIR 2022; schema version 0.1): a YAML document between the
lines ``ir_metadata.start`` and ``ir_metadata.end``, as ``#`` comment lines at the top of a TREC
run file, or in a file beside the run named ``<run file>.yaml``/``.yml`` or ``<model>.yaml``/
``.yml``. Its numeric leaves become metadata keys named by their path (``platform.hardware.cpu.
number of cores``; an item of a sequence of mappings is named by its ``name`` key, e.g.
``method.retrieval.bm25.k1``), and the RAM sizes the schema writes as text (``32 GB``) become
``platform.hardware.ram (GB)`` and ``platform.hardware.gpu.ram (GB)``. ``schema-version`` and
``run-version`` are versions, not measurements, and are left out. The schema has no field for
latency or cost: write those in ``run_metadata`` (which wins over ir_metadata for the same key)
or as your own keys in the YAML. Reading ir_metadata needs PyYAML.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from analysis.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "RunGroup",
    "fold_query_ids",
    "group_metadata",
    "group_run",
    "parse_groups",
    "parse_run_metadata",
    "read_ir_metadata",
    "run_metadata",
]

GroupKind = Literal["seeds", "folds"]
_GROUP_KEYS = {"seeds", "folds", "fold_queries"}
_START, _END = "ir_metadata.start", "ir_metadata.end"
_VERSION_KEYS = {"schema-version", "run-version"}
_GB_KEYS = {("platform", "hardware", "ram"), ("platform", "hardware", "gpu", "ram")}
_GB = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*GB\s*$", re.IGNORECASE)
_HEAD_BYTES = 1 << 16  # an ir_metadata header is a few kilobytes


@dataclass(frozen=True)
class RunGroup:
    """Runs of one model: ``kind`` ``"seeds"`` (``members`` = the seeds' runs) or ``"folds"``
    (``members[i]`` is the run of fold ``folds[i]``; ``fold_files[i]`` its query ids, when the
    manifest names them)."""

    name: str
    kind: GroupKind
    members: tuple[str, ...]
    folds: tuple[str, ...] = ()
    fold_files: tuple[Path, ...] = ()

    @property
    def size(self) -> int:
        """Seeds of a seed group (1 for a fold group: one run answers each query)."""
        return len(self.members) if self.kind == "seeds" else 1


def parse_groups(
    value: object,
    runs: Sequence[str],
    fail: Callable[[str], InputError],
    resolve: Callable[[str, str], Path],
) -> dict[str, RunGroup]:
    """The ``groups`` table of a dataset (see the module docstring). ``runs``: the dataset's
    model names; ``fail(message)`` makes the error naming the manifest and dataset;
    ``resolve(what, path)`` checks a fold file (exists, confined) and returns it resolved.

    Raises:
        InputError: not a table, an unknown key, neither or both of ``seeds``/``folds``, fewer
            than two members, a member that is not a run of the dataset or named twice (or in
            another group: a run belongs to one group at most), a group named like a run,
            ``fold_queries`` whose folds differ from ``folds``.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("groups must be a table [groups.<name>] of seeds = [...] or folds = {...}")
    out: dict[str, RunGroup] = {}
    for name, body in value.items():
        where = f"group {name!r}"
        if str(name) in runs:
            raise fail(f"{where}: the name is a run of the dataset; name the group otherwise")
        if not isinstance(body, dict):
            raise fail(f"{where}: expected seeds = [...] or folds = {{...}}")
        unknown = sorted(set(body) - _GROUP_KEYS)
        if unknown:
            raise fail(f"{where}: unknown key(s) {', '.join(unknown)}")
        if ("seeds" in body) == ("folds" in body):
            raise fail(f"{where}: give exactly one of seeds = [...] or folds = {{...}}")
        if "seeds" in body:
            if "fold_queries" in body:
                raise fail(f"{where}: fold_queries belongs to a folds group")
            out[str(name)] = _seeds(str(name), body["seeds"], runs, fail)
        else:
            out[str(name)] = _folds(str(name), body, runs, fail, resolve)
        taken = {m: g for g, grp in out.items() if g != str(name) for m in grp.members}
        shared = [m for m in out[str(name)].members if m in taken]
        if shared:
            raise fail(f"{where}: run {shared[0]!r} is already in group {taken[shared[0]]!r}")
    return out


def _members(where: str, names: list, runs: Sequence[str], fail: Callable) -> tuple[str, ...]:
    if len(names) < 2 or not all(isinstance(m, str) for m in names):
        raise fail(f"{where}: needs at least two run names")
    unknown = [m for m in names if m not in runs]
    if unknown:
        raise fail(f"{where}: {', '.join(map(repr, unknown))} not a run of the dataset")
    if len(set(names)) < len(names):
        raise fail(f"{where}: a run is named twice")
    return tuple(names)


def _seeds(name: str, value: object, runs: Sequence[str], fail: Callable) -> RunGroup:
    if not isinstance(value, list):
        raise fail(f"group {name!r}: seeds must be a list of run names")
    return RunGroup(name, "seeds", _members(f"group {name!r}", value, runs, fail))


def _folds(
    name: str, body: dict, runs: Sequence[str], fail: Callable, resolve: Callable
) -> RunGroup:
    where = f"group {name!r}"
    folds = body["folds"]
    if not isinstance(folds, dict):
        raise fail(f"{where}: folds must be a table {{fold = run}}")
    members = _members(where, list(folds.values()), runs, fail)
    files: tuple[Path, ...] = ()
    if "fold_queries" in body:
        given = body["fold_queries"]
        if not isinstance(given, dict) or set(given) != set(folds):
            raise fail(f"{where}: fold_queries must name one file per fold ({', '.join(folds)})")
        if not all(isinstance(v, str) for v in given.values()):
            raise fail(f"{where}: fold_queries values must be path strings")
        files = tuple(resolve(f"{where} fold {f!r}", given[f]) for f in folds)
    return RunGroup(name, "folds", members, tuple(str(f) for f in folds), files)


def fold_clash(answered: Mapping[str, Iterable[object]]) -> tuple[str, str, str] | None:
    """``(query, fold, other fold)`` of the first query that two folds' runs answer
    (``answered``: fold -> the query ids its run answers, in fold order), else None: each query
    of a fold group belongs to one fold."""
    owner: dict[str, str] = {}
    for fold, queries in answered.items():
        for query in queries:
            first = owner.setdefault(str(query), str(fold))
            if first != str(fold):
                return str(query), first, str(fold)
    return None


def parse_run_metadata(
    value: object, models: Sequence[str], fail: Callable[[str], InputError]
) -> dict[str, dict[str, float]]:
    """The ``run_metadata`` table: model (a run or a group of the dataset) -> ``{key:
    number}``; numbers are finite ints or floats (not booleans).

    Raises:
        InputError: not a table of tables, an unknown model, a value that is not a number.
    """
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise fail("run_metadata must be a table {model = {key = number}}")
    out: dict[str, dict[str, float]] = {}
    for model, entries in value.items():
        if str(model) not in models:
            raise fail(f"run_metadata: {model!r} is not a run or group of the dataset")
        if not isinstance(entries, dict):
            raise fail(f"run_metadata.{model}: expected a table {{key = number}}")
        numbers = {}
        for key, number in entries.items():
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise fail(f"run_metadata.{model}.{key}: {number!r} is not a number")
            if not math.isfinite(number):
                raise fail(f"run_metadata.{model}.{key}: must be a finite number")
            numbers[str(key)] = float(number)
        out[str(model)] = numbers
    return out


def fold_query_ids(group: RunGroup) -> dict[str, list[str]] | None:
    """Each fold's query ids from the group's ``fold_queries`` files (``None`` without them).

    Raises:
        InputError: an unreadable fold file; a query listed in two folds (naming both).
    """
    if group.kind != "folds" or not group.fold_files:
        return None
    from analysis.io.stark import read_split_ids

    out: dict[str, list[str]] = {}
    seen: dict[str, str] = {}
    for fold, path in zip(group.folds, group.fold_files, strict=True):
        ids = read_split_ids(path)
        for qid in ids:
            if qid in seen:
                raise InputError(
                    path, None, f"query {qid!r} is in folds {seen[qid]!r} and {fold!r}"
                )
            seen[qid] = fold
        out[fold] = ids
    return out


# --------------------------------------------------------------------------- ir_metadata


def _yaml_text(text: str) -> str | None:
    """The YAML between the ir_metadata markers (comment marks removed), or None."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    plain = [re.sub(r"^#\s?", "", line) for line in lines]
    marks = [i for i, line in enumerate(plain) if line.strip() in (_START, _END)]
    if len(marks) < 2 or plain[marks[0]].strip() != _START:
        return None
    end = next((i for i in marks[1:] if plain[i].strip() == _END), None)
    if end is None:
        return None
    return "\n".join(plain[marks[0] + 1 : end])


def _flatten(node: object, path: tuple[str, ...], out: dict[str, float]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if not path and str(key) in _VERSION_KEYS:
                continue
            _flatten(value, (*path, str(key)), out)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            label = str(item.get("name", i)) if isinstance(item, dict) else str(i)
            _flatten(item, (*path, label), out)
    elif isinstance(node, bool):
        return
    elif isinstance(node, int | float) and math.isfinite(node):
        out[".".join(path)] = float(node)
    elif isinstance(node, str) and path in _GB_KEYS and (found := _GB.match(node)):
        out[".".join(path) + " (GB)"] = float(found.group(1))


def read_ir_metadata(text: str, source: str | Path) -> dict[str, float]:
    """The numeric fields of the ir_metadata block in ``text`` (module docstring); empty when
    the text holds no block.

    Raises:
        InputError: the block is not YAML (naming ``source``), PyYAML is not installed.
    """
    body = _yaml_text(text)
    if body is None:
        return {}
    try:
        import yaml
    except ImportError:
        message = "reading ir_metadata needs PyYAML: pip install pyyaml"
        raise InputError(source, None, message) from None
    try:
        data = yaml.safe_load(body)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = None if mark is None else mark.line + 2  # after the start line
        raise InputError(source, line, f"ir_metadata is not valid YAML: {exc}") from None
    out: dict[str, float] = {}
    if isinstance(data, dict):
        _flatten(data, (), out)
    return out


def _beside(run: Path, model: str) -> list[Path]:
    """The ir_metadata files that may sit beside ``run``: ``<run file>.yaml``/``.yml``, and
    ``<model>.yaml``/``.yml`` when the model name is one file name (not empty, ``.`` or ``..``,
    no ``/``, ``\\`` or NUL): a model name is any text and must not reach outside the run's
    folder. Names over 255 bytes are left out (no file system holds them; looking one up
    fails)."""
    stems = [run.name, *([model] if _one_name(model) else [])]
    names = [f"{stem}{ext}" for stem in stems for ext in (".yaml", ".yml")]
    return [run.parent / n for n in dict.fromkeys(names) if len(os.fsencode(n)) <= 255]


def _one_name(text: str) -> bool:
    """Whether ``text`` names a file in a folder, not a path or the folder itself."""
    return text not in ("", ".", "..") and not any(c in text for c in "/\\\0")


def _header(run: Path) -> str:
    """The first bytes of a text run (ir_metadata sits at its top), or "" for other files."""
    if run.suffix.lower() in (".parquet", ".gz", ".lz4", ".json"):
        return ""
    try:
        with run.open("rb") as f:
            head = f.read(_HEAD_BYTES)
    except OSError:
        return ""
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    return text if text.lstrip().startswith("#") else ""


def _ir_metadata_of(run: Path, model: str) -> dict[str, float]:
    from analysis.io._text import read_text

    found = read_ir_metadata(_header(run), run)
    for path in _beside(run, model):
        if path.is_file():
            found |= read_ir_metadata(read_text(path), path)
    return found


def run_metadata(
    runs: Mapping[str, Path],
    manifest: Mapping[str, Mapping[str, float]],
    groups: Mapping[str, RunGroup],
) -> dict[str, dict[str, float]]:
    """Every run's and group's numbers: ir_metadata read beside (or at the top of) each run
    file, then the manifest's ``run_metadata`` over it; a group gets its own manifest entry,
    else the members' mean for each key every member has.

    Raises:
        InputError: an ir_metadata block that is not YAML.
    """
    out = {m: {**_ir_metadata_of(Path(p), m), **manifest.get(m, {})} for m, p in runs.items()}
    for name, group in groups.items():
        out[name] = group_metadata(group, out) | dict(manifest.get(name, {}))
    return {m: v for m, v in out.items() if v}


def group_metadata(group: RunGroup, members: Mapping[str, Mapping[str, float]]) -> dict:
    """For each key every member of ``group`` has, the mean of the members' values."""
    tables = [members.get(m, {}) for m in group.members]
    keys = [k for k in tables[0] if all(k in t for t in tables[1:])] if tables else []
    return {k: sum(t[k] for t in tables) / len(tables) for k in keys}


def group_run(group: RunGroup, load: Callable[[str], pd.DataFrame]) -> pd.DataFrame:
    """The one ranking shown for a group (``load(model)`` reads a member's run): a seed group's
    first seed (the *representative seed*: its ranking, first gold rank and other ranking
    diagnostics are what the Queries, Compare and Map pages show, beside the seed means); a
    fold group's runs together, each cut to its fold's queries when ``fold_queries`` names
    them (a fold group's run then is the model's full cross-validated run)."""
    import pandas as pd

    if group.kind == "seeds":
        return load(group.members[0])
    folds = fold_query_ids(group)
    parts = []
    for fold, member in zip(group.folds, group.members, strict=True):
        run = load(member)
        if folds is not None:
            run = run.loc[run["query_id"].astype("str").isin(set(folds[fold]))]
        parts.append(run)
    return pd.concat(parts, ignore_index=True)
