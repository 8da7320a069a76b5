"""``import stark``: a folder in STaRK's format -> a bundle: STaRK's own domains
(``<name>-synthesized`` and ``<name>-human``) and any other knowledge base in the same format
(AvaTaR's Flickr30k-Entities ``qa.csv``: one dataset ``<name>``).

Folder layout read (every part but one QA file is optional)::

    DIR/stark_qa.csv  or  DIR/stark_qa/stark_qa.csv          synthesized queries + answers
    DIR/stark_qa_human_generated_eval.csv  (or under stark_qa/) human-generated queries
    DIR/qa.csv, DIR/<prefix>_qa*.csv                         other QA files in STaRK's format
    DIR/split/*.index                                        train / val / test / test-0.1 ...
    DIR/query_groups/group_query_<split>.json                AvaTaR pattern groups
    DIR/metapaths/<split>.json                               MoR metapaths
    DIR/runs/**                                              runs (eval_results_*.csv, STaRK
                                                             submission CSVs query_id,pred_rank,
                                                             TREC runs, run tables) and their
                                                             published summaries

* QA files: any ``*.csv`` named ``stark_qa*``, ``qa`` or ``<prefix>_qa*`` whose header has
  STaRK's columns ``id,query,answer_ids``; one whose name mentions ``human`` holds the
  human-generated queries, the others the main query set. STaRK's own names win, then
  ``qa.csv``, then the others by name; the files left out are named in a note (Amazon's
  ``stark_qa_current_ids.csv`` beside ``stark_qa.csv``).
* Datasets: with STaRK's own QA files ``<name>-synthesized`` (with the split files as ``splits``
  and ``split = "test"`` when a test split exists) and ``<name>-human``; with other QA files
  ``<name>`` (``query_type = "all"``) and ``<name>-human``. ``name`` defaults to the folder's
  name.
* Slice columns in the queries table: ``query_type`` (``synthesized``/``human``),
  ``pattern_group`` and ``pattern`` (AvaTaR), ``metapath`` (MoR; Prime's node/relation lists
  are written ``drug -target-> gene/protein``); queries without one get ``none``.
* Runs: each run file's model is its folder path under ``runs/`` (``runs/ada-002/x.csv`` ->
  ``ada-002``, ``runs/ada-002/test/x.csv`` -> ``ada-002/test``; a file directly in ``runs/`` is
  named by its stem; bytes of a name that are not UTF-8 are read as U+FFFD). A file goes to
  the human dataset when its path under ``runs/`` mentions ``human``, else to the main one.
  Two files of one folder for one dataset get the file stem appended
  (``ada-002/eval_results_val``); files whose stems are the same too get their whole file name
  (``bm25.trec`` and ``bm25.tsv``), so that no run replaces another.
  Summaries (``eval_metrics_*.json``, ``*.metrics.json``, ``metrics.json``,
  ``leaderboard*.csv``) and other files that are no run (a table without a ``doc_id``
  column, such as per-query metrics) are skipped as runs, with a note.
* Checks (see :mod:`analysis.io.importers.stark_checks`): split ids that are no query of the
  QA file (``007`` for ``7``; a note with their count), stale eval.py output, idx/query_id
  mix-ups, Amazon's old and current query ids (files of the other convention are re-keyed to the
  QA file's; the convention is named for a folder called ``amazon`` or when a file was
  re-keyed), Prime's 98/109-row human set and the qrels version each run was made on, the
  saved depth of each run against the dataset's metrics (:mod:`analysis.core.depth`), and the
  published summary beside each run (:mod:`analysis.io.summary_audit`; the summary is kept in
  the bundle as ``runs/<model>.metrics.json`` so the app audits it again).
* ``skb``: a STaRK SKB folder (see :mod:`analysis.io.skb`) adds entities and edges to both
  datasets; its domain is the one the collection's name has as a word (``amazon``, ``mag``,
  ``prime``), else told from its nodes.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from analysis.core import paths, progress
from analysis.core.errors import InputError
from analysis.core.paths import readable_name
from analysis.io import detect_format, load_run
from analysis.io._text import head_text, iter_lines, parse_json, read_text
from analysis.io.importers import stark_checks as checks
from analysis.io.importers._write import (
    ImportedDataset,
    ImportResult,
    check_out,
    run_frame,
    write_bundle,
)
from analysis.io.importers.registry import Argument, Importer, file_names
from analysis.io.importers.stark_audit import RunSource, audit_run
from analysis.io.stark import QA_COLUMNS, read_split_index, read_stark_qa
from analysis.io.summaries import is_summary_file

METRICS = ("hit@1", "hit@5", "recall@20", "mrr")
STARK_NAMES = {"synthesized": "stark_qa.csv", "human": "stark_qa_human_generated_eval.csv"}
QA_FILE = re.compile(r"^(stark_qa.*|qa|.+_qa.*)\.csv$", re.IGNORECASE)
RUN_SKIP = (".json", ".md", ".txt.lock", ".log", ".pkl", ".pt", ".npy")


def is_qa_file(path: Path) -> bool:
    """A file named as a QA file whose header has STaRK's columns ``id,query,answer_ids``."""
    if not QA_FILE.match(path.name.removesuffix(".gz")):
        return False
    try:
        head = head_text(path, 4096)
    except InputError:
        return False
    first = next(iter_lines(head), (1, ""))[1]
    columns = {c.strip() for c in next(csv.reader([first]), [])}
    return set(QA_COLUMNS) <= columns


def _qa_files(root: Path) -> tuple[dict[str, Path], list[str]]:
    """The QA file of each query set (``synthesized``: the main one, ``human``) and notes naming
    the QA files left out (module docstring: STaRK's names, then ``qa.csv``, then by name)."""
    found = [
        p
        for folder in (root, root / "stark_qa")
        if folder.is_dir()
        for p in sorted(folder.iterdir())
        if p.is_file() and is_qa_file(p)
    ]
    chosen: dict[str, Path] = {}
    notes = []
    for kind in ("synthesized", "human"):
        mine = [p for p in found if ("human" in p.name.lower()) == (kind == "human")]
        mine.sort(key=lambda p: (p.name.removesuffix(".gz") != STARK_NAMES[kind],
                                 p.name.removesuffix(".gz") != "qa.csv", p.parent != root,
                                 p.name))  # fmt: skip
        if mine:
            chosen[kind] = mine[0]
        notes += [
            f"{other}: also a QA file of the {kind} queries; {mine[0].name} is imported (one QA "
            "file per query set)"
            for other in mine[1:]
        ]
    return chosen, notes


def _is_stark(qa: dict[str, Path]) -> bool:
    """STaRK's own QA files (``<name>-synthesized``/``-human`` datasets) rather than another
    knowledge base's (``<name>``)."""
    main = qa.get("synthesized")
    return main is None or main.name.lower().startswith("stark_qa")


def _metapath_text(value: object) -> str:
    """MoR's ``rg.Metapath``: a string (``a -> b``) or lists ``[node, rel, node, ...]``."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(p, list) for p in value):
        paths = []
        for path in value:
            parts = [str(path[0])] if path else []
            for i in range(1, len(path) - 1, 2):
                parts.append(f"-{path[i]}-> {path[i + 1]}")
            paths.append(" ".join(parts))
        return " | ".join(paths)
    return "" if value is None else str(value)


def _read_json(path: Path) -> object:
    """The JSON of ``path`` (UTF-8, a BOM allowed); errors name the file and line, JSON nested
    beyond the depth limit of :mod:`analysis.io._text` included."""
    return parse_json(read_text(path), path)


def _groups(path: Path) -> pd.DataFrame:
    data = _read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, 1, "expected an object {group: {pattern, query_idx}}")
    rows = []
    for group, body in data.items():
        if not isinstance(body, dict) or not isinstance(body.get("query_idx"), list):
            raise InputError(path, None, f"group {group!r} has no query_idx list")
        rows += [(str(q), str(group), str(body.get("pattern", ""))) for q in body["query_idx"]]
    return pd.DataFrame(rows, columns=["query_id", "pattern_group", "pattern"], dtype="str")


def _metapaths(path: Path) -> pd.DataFrame:
    data = _read_json(path)
    if not isinstance(data, list):
        raise InputError(path, 1, "expected a list of {q_id, rg} records")
    rows = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or "q_id" not in item:
            raise InputError(path, None, f"record {i} has no q_id")
        rg = item.get("rg") if isinstance(item.get("rg"), dict) else {}
        rows.append((str(item["q_id"]), _metapath_text(rg.get("Metapath"))))
    return pd.DataFrame(rows, columns=["query_id", "metapath"], dtype="str")


class _Domain:
    """The QA tables of one query set and what the checks need to re-key other files."""

    def __init__(self, kind: str, path: Path) -> None:
        self.kind, self.path = kind, path
        self.queries, self.qrels = read_stark_qa(path)
        self.ids = set(self.queries["query_id"])
        # Amazon's two id conventions are told apart from the data (most queries owning their
        # id as an answer), whatever the folder is called; MAG and Prime never match
        self._old_ids(path)
        self.convention = checks.amazon_convention(self.queries, self.qrels)
        self.mapping: dict[str, str] = {}
        self.rekeyed = False
        if self.convention is not None:
            self.mapping = checks.amazon_id_map(self.queries, self.convention)

    def _old_ids(self, path: Path) -> None:
        """Keep an ``old_id`` column (a re-keyed Amazon QA file, gzipped or not) for the id
        mapping."""
        header = next(iter_lines(head_text(path)), (1, ""))[1]
        if "old_id" not in [h.strip() for h in next(csv.reader([header]), [])]:
            return
        table = pd.read_csv(
            io.StringIO(read_text(path)), dtype=str, usecols=["id", "old_id"], keep_default_na=False
        )
        old = dict(zip(table["id"].str.strip(), table["old_id"].str.strip(), strict=True))
        self.queries["old_id"] = self.queries["query_id"].map(old).fillna("").astype("str")

    def rekey(self, ids: pd.Series, source: Path, notes: list[str]) -> pd.Series:
        out, changed = checks.rekey(ids, self.ids, self.mapping)
        if changed:
            self.rekeyed = True
            other = "current" if self.convention == "old" else "old"
            notes.append(
                f"{source}: keyed by the {other} Amazon query ids (June 2024 change: new id = "
                f"rank of the old id); re-keyed to the {self.convention} ids of {self.path.name}"
            )
        return out


def _slices(queries: pd.DataFrame, frames: list[pd.DataFrame]) -> pd.DataFrame:
    """``queries`` with the columns of ``frames`` (first row per query); ``none`` where absent."""
    if not frames:
        return queries
    table = pd.concat(frames, ignore_index=True).drop_duplicates("query_id")
    merged = queries.merge(table, on="query_id", how="left")
    for c in table.columns:
        if c != "query_id":
            merged[c] = merged[c].fillna("none").astype("str")
    return merged


def _run_files(root: Path) -> list[Path]:
    runs = root / "runs"
    if not runs.is_dir():
        return []
    return sorted(
        p
        for p in runs.rglob("*")
        if p.is_file()
        and not p.name.startswith(".")
        and not p.name.lower().removesuffix(".gz").endswith(RUN_SKIP)
        and not is_summary_file(p)
    )


def _has_doc_ids(path: Path) -> bool:
    """Whether the table ``path`` has a ``doc_id`` column (or an alias such as ``docno``): a
    table without one (per-query metrics, queries) is no run."""
    from analysis.io import tables

    return "doc_id" in {tables.ID_ALIASES.get(c, c) for c in tables.table_columns(path)}


def _model_names(root: Path, files: list[Path]) -> dict[Path, tuple[str, str]]:
    """file -> (dataset kind, model name); see the module docstring."""
    runs = root / "runs"
    out: dict[Path, tuple[str, str]] = {}
    for f in files:
        rel = f.relative_to(runs)
        kind = "human" if "human" in rel.as_posix().lower() else "synthesized"
        folder = readable_name(rel.parent.as_posix())
        out[f] = (kind, folder if folder != "." else readable_name(f.name).split(".")[0])
    counts: dict[tuple[str, str], int] = {}
    for key in out.values():
        counts[key] = counts.get(key, 0) + 1
    for f, (kind, model) in list(out.items()):
        if counts[(kind, model)] > 1 and f.parent != runs:
            out[f] = (kind, f"{model}/{readable_name(f.name).split('.')[0]}")
    counts = {}
    for key in out.values():
        counts[key] = counts.get(key, 0) + 1
    for f, (kind, model) in list(out.items()):  # same stem: bm25.trec and bm25.tsv
        if counts[(kind, model)] > 1:
            head = model.rpartition("/")[0] if f.parent != runs else ""
            name = readable_name(f.name)
            out[f] = (kind, f"{head}/{name}" if head else name)
    return out


@dataclass
class _Import:
    """One import in progress: the folder, the collection's name, its query sets and splits, and
    the notes so far."""

    src: Path
    name: str
    domains: dict[str, _Domain]
    notes: list[str] = field(default_factory=list)
    splits: dict[str, list[str]] = field(default_factory=dict)
    summaries: dict[str, dict[str, dict]] = field(default_factory=dict)

    def read_run(self, path: Path, kind: str, model: str) -> pd.DataFrame | None:
        """The run of ``path`` keyed by the QA file's ids, or None (skipped, with a note)."""
        try:
            fmt = detect_format(path)
        except InputError as exc:
            self.notes.append(f"skipped {exc}")
            return None
        if fmt not in ("trec_run", "stark_eval", "table"):
            self.notes.append(f"{path}: skipped (a {fmt.replace('_', ' ')} file, not a run)")
            return None
        if fmt == "table" and not _has_doc_ids(path):
            self.notes.append(f"{path}: skipped (a table without a doc_id column, not a run)")
            return None
        drop: set[int] = set()
        if fmt == "stark_eval":
            drop, found = checks.check_stark_eval(path)
            self.notes.extend(found)
        run = load_run(path, fmt)
        if drop:
            run = run.drop_duplicates(["query_id", "doc_id", "rank"], ignore_index=True)
        domain = self.domains[kind]
        run["query_id"] = domain.rekey(run["query_id"], path, self.notes)
        if fmt == "stark_eval":
            qids = set(run["query_id"].astype("str"))
            message = checks.idx_instead_of_query_id(
                path, qids, domain.queries["query_id"].tolist()
            )
            if message:
                self.notes.append(message)
        source = RunSource(path, fmt, model, domain.queries, domain.qrels, self.name, self.src,
                           self.splits if kind == "synthesized" else {}, METRICS)  # fmt: skip
        found_notes, kept = audit_run(source, run)
        self.notes.extend(found_notes)
        if kept is not None:
            self.summaries.setdefault(kind, {})[model] = kept
        return run

    def runs(self) -> dict[str, dict[str, pd.DataFrame]]:
        """Every run under ``runs/``, per query set and model."""
        out: dict[str, dict[str, pd.DataFrame]] = {kind: {} for kind in self.domains}
        found = _model_names(self.src, _run_files(self.src))
        shown = progress.current()
        shown.plan(len(found), "run files read")
        for path, (kind, model) in found.items():
            shown.advance(0)  # the line shows while a long file is read
            if kind not in self.domains:
                self.notes.append(f"{path}: skipped (no {kind} QA file for it)")
                continue
            run = self.read_run(path, kind, model)
            if run is not None:
                out[kind][model] = run_frame(run)
            shown.advance(1, 0 if run is None else len(run))
        return out

    def read_splits(self) -> None:
        if "synthesized" not in self.domains:
            return
        main = self.domains["synthesized"]
        for path in sorted((self.src / "split").glob("*.index")):
            table = read_split_index(path)
            ids = main.rekey(table["query_id"], path, self.notes).astype("str").tolist()
            missing = [q for q in ids if q not in main.ids]
            if missing:
                self.notes.append(
                    f"{path}: {len(missing):,} of {len(ids):,} query ids are not queries of "
                    f"{main.path.name} (e.g. {missing[0]!r:.40}): the split leaves them out"
                )
            self.splits[path.name.removesuffix(".index")] = ids

    def queries(self, kind: str, label: str) -> pd.DataFrame:
        """The queries of one set with their slice columns (pattern groups, metapaths)."""
        domain = self.domains[kind]
        queries = domain.queries.drop(columns=["old_id"], errors="ignore")
        queries = queries.assign(query_type=label)
        for folder, reader in (("query_groups", _groups), ("metapaths", _metapaths)):
            tables = []
            for path in sorted((self.src / folder).glob("*.json")):
                if _kind_of(path) == kind:
                    table = reader(path)
                    table["query_id"] = domain.rekey(table["query_id"], path, self.notes)
                    tables.append(table)
            queries = _slices(queries, tables)
        return queries

    def convention_notes(self) -> None:
        """Which QA files use Amazon's old ids: said for a folder named after Amazon, or when a
        file of the other convention was re-keyed (elsewhere queries that are their own answer,
        as AvaTaR's Flickr30k captions, are no Amazon convention)."""
        for domain in self.domains.values():
            if domain.convention == "old" and ("amazon" in self.name.lower() or domain.rekeyed):
                self.notes.insert(
                    0,
                    f"{domain.path}: Amazon query ids of the old convention (each query's id is "
                    "one of its own answers: the seed product); the current release numbers them "
                    "by rank; files keyed by the other convention are re-keyed",
                )


def _entities(skb: str | Path | None, name: str, notes: list[str]) -> tuple:
    if skb is None:
        notes.append(
            "no --skb: entities are bare node ids; pass the SKB folder (the processed/ folder "
            "stark_qa.load_skb downloads) for their names and text"
        )
        return None, None
    from analysis.io.skb import read_skb

    kb = read_skb(skb, _domain_of(name))
    notes += kb.notes
    return kb.entities, kb.edges


def import_stark(
    root: str | Path,
    out: str | Path,
    *,
    skb: str | Path | None = None,
    name: str | None = None,
) -> ImportResult:
    """Import a folder in STaRK's format as a bundle at ``out`` (see the module docstring).

    Returns:
        the :class:`ImportResult` (datasets written and the data-check notes).

    Raises:
        InputError: no QA file, ``out`` inside the input, any unreadable file (one line naming
            it), a stale eval.py file with conflicting rows.
    """
    src = paths.resolve(root)
    if not src.is_dir():
        raise InputError(root, None, "the STaRK folder does not exist")
    inputs = [src] + ([Path(skb)] if skb is not None else [])
    target = check_out(out, inputs)
    name = name or src.name
    qa, found = _qa_files(src)
    if not qa:
        raise InputError(
            src, None, "no QA file with STaRK's columns id,query,answer_ids here (stark_qa.csv, "
            "stark_qa_human_generated_eval.csv, qa.csv or <prefix>_qa*.csv)"
        )  # fmt: skip
    job = _Import(src, name, {kind: _Domain(kind, path) for kind, path in qa.items()}, found)
    if "human" in job.domains and "prime" in name.lower():
        note = checks.prime_human_note(job.domains["human"].path, len(job.domains["human"].queries))
        job.notes.extend([note] if note else [])
    job.read_splits()
    runs = job.runs()
    entities, edges = _entities(skb, name, job.notes)
    stark = _is_stark(qa)
    datasets = []
    for kind, domain in job.domains.items():
        main = kind == "synthesized" and not stark
        ds_splits = job.splits if kind == "synthesized" else {}
        datasets.append(
            ImportedDataset(
                name=name if main else f"{name}-{kind}",
                family="stark",
                queries=job.queries(kind, "all" if main else kind),
                qrels=domain.qrels,
                metrics=METRICS,
                entities=entities,
                edges=edges,
                runs=runs.get(kind, {}),
                splits=ds_splits,
                default_split="test" if "test" in ds_splits else None,
                description=f"{'STaRK ' if stark else ''}{name} {'' if main else kind + ' '}"
                f"queries ({domain.path.name})",
                summaries=job.summaries.get(kind, {}),
            )
        )
    job.convention_notes()
    what = "STaRK" if stark else "STaRK-format"
    write_bundle(target, name, datasets, description=f"{what} {name}, imported from {src.name}")
    return ImportResult(out=target, datasets=datasets, notes=job.notes)


def _kind_of(path: Path) -> str:
    return "human" if "human" in path.name.lower() else "synthesized"


def _domain_of(name: str) -> str | None:
    """The STaRK domain a collection's name names as a word (``stark-mag``, ``prime``), else
    None (the SKB reader tells it from the nodes): ``images`` holds no domain."""
    found = re.search(r"(?<![a-z])(amazon|mag|prime)(?![a-z])", name.lower())
    return found.group(1) if found else None


def detect(folder: Path) -> float:
    """1 for a folder with a ``stark_qa*.csv`` file, a ``stark_qa/`` folder, or a QA file in
    STaRK's format named ``qa.csv`` / ``<prefix>_qa*.csv`` (AvaTaR's Flickr30k-Entities;
    :func:`is_qa_file`), else 0."""
    names = file_names(folder)
    if any(n.startswith("stark_qa") and n.endswith(".csv") for n in names):
        return 1.0
    if (folder / "stark_qa").is_dir() or any(is_qa_file(folder / n) for n in sorted(names)):
        return 1.0
    return 0.0


IMPORTERS = (
    Importer(
        "stark",
        "a STaRK domain folder (QA CSVs, splits, runs)",
        import_stark,
        detect,
        arguments=(Argument("--skb", "STaRK SKB folder (processed/node_info.pkl)"),),
    ),
)
