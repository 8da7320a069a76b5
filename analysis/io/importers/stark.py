"""``import stark``: a STaRK domain folder -> a bundle with ``<name>-synthesized`` and
``<name>-human`` datasets.

Folder layout read (every part but one QA file is optional)::

    DIR/stark_qa.csv  or  DIR/stark_qa/stark_qa.csv          synthesized queries + answers
    DIR/stark_qa_human_generated_eval.csv  (or under stark_qa/) human-generated queries
    DIR/split/*.index                                        train / val / test / test-0.1 ...
    DIR/query_groups/group_query_<split>.json                AvaTaR pattern groups
    DIR/metapaths/<split>.json                               MoR metapaths
    DIR/runs/**                                              runs (eval_results_*.csv, STaRK
                                                             submission CSVs query_id,pred_rank,
                                                             TREC runs, run tables)

* Datasets: ``<name>-synthesized`` (with the split files as ``splits`` and ``split = "test"``
  when a test split exists) and ``<name>-human``; ``name`` defaults to the folder's name.
* Slice columns in the queries table: ``query_type`` (``synthesized``/``human``),
  ``pattern_group`` and ``pattern`` (AvaTaR), ``metapath`` (MoR; Prime's node/relation lists
  are written ``drug -target-> gene/protein``); queries without one get ``none``.
* Runs: each run file's model is its folder path under ``runs/`` (``runs/ada-002/x.csv`` ->
  ``ada-002``, ``runs/ada-002/test/x.csv`` -> ``ada-002/test``; a file directly in ``runs/`` is
  named by its stem). A file goes to the human dataset when its path under ``runs/`` mentions
  ``human``, else to the synthesized one. Two files of one folder for one dataset get the file
  stem appended (``ada-002/eval_results_val``). Files that are no run (``eval_metrics_*.json``)
  are skipped.
* Checks (see :mod:`analysis.io.importers.stark_checks`): stale eval.py output, idx/query_id
  mix-ups, Amazon's old and current query ids (files of the other convention are re-keyed to the
  QA file's), Prime's 98/109-row human set.
* ``skb``: a STaRK SKB folder (see :mod:`analysis.io.skb`) adds entities and edges to both
  datasets.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.io import detect_format, load_run
from analysis.io.importers import stark_checks as checks
from analysis.io.importers._write import (
    ImportedDataset,
    ImportResult,
    check_out,
    run_frame,
    write_bundle,
)
from analysis.io.stark import read_split_index, read_stark_qa

METRICS = ("hit@1", "hit@5", "recall@20", "mrr")
QA_NAMES = ("stark_qa.csv",)
HUMAN_NAMES = ("stark_qa_human_generated_eval.csv",)
RUN_SKIP = (".json", ".md", ".txt.lock", ".log", ".pkl", ".pt", ".npy")


def _find(root: Path, names: tuple[str, ...]) -> Path | None:
    for folder in (root, root / "stark_qa"):
        for name in names:
            for candidate in (folder / name, folder / f"{name}.gz"):
                if candidate.is_file():
                    return candidate
    return None


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
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"invalid JSON: {exc.msg}") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None


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
        if self.convention is not None:
            self.mapping = checks.amazon_id_map(self.queries, self.convention)

    def _old_ids(self, path: Path) -> None:
        """Keep an ``old_id`` column (a re-keyed Amazon QA file) for the id mapping."""
        with paths.reading(path, "cannot open"), path.open("rb") as fh:
            header = fh.readline().decode("utf-8-sig", "replace")
        if "old_id" not in [h.strip() for h in header.split(",")]:
            return
        table = pd.read_csv(
            path, dtype=str, usecols=["id", "old_id"], keep_default_na=False, encoding="utf-8-sig"
        )
        old = dict(zip(table["id"].str.strip(), table["old_id"].str.strip(), strict=True))
        self.queries["old_id"] = self.queries["query_id"].map(old).fillna("").astype("str")

    def rekey(self, ids: pd.Series, source: Path, notes: list[str]) -> pd.Series:
        out, changed = checks.rekey(ids, self.ids, self.mapping)
        if changed:
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
    )


def _model_names(root: Path, files: list[Path]) -> dict[Path, tuple[str, str]]:
    """file -> (dataset kind, model name); see the module docstring."""
    runs = root / "runs"
    out: dict[Path, tuple[str, str]] = {}
    for f in files:
        rel = f.relative_to(runs)
        kind = "human" if "human" in rel.as_posix().lower() else "synthesized"
        folder = rel.parent.as_posix()
        out[f] = (kind, folder if folder != "." else f.name.split(".")[0])
    counts: dict[tuple[str, str], int] = {}
    for key in out.values():
        counts[key] = counts.get(key, 0) + 1
    for f, (kind, model) in list(out.items()):
        if counts[(kind, model)] > 1 and f.parent != runs:
            out[f] = (kind, f"{model}/{f.name.split('.')[0]}")
    return out


def _load_runs(
    root: Path, domains: dict[str, _Domain], notes: list[str], prime: bool
) -> dict[str, dict[str, pd.DataFrame]]:
    runs: dict[str, dict[str, pd.DataFrame]] = {kind: {} for kind in domains}
    for path, (kind, model) in _model_names(root, _run_files(root)).items():
        if kind not in domains:
            notes.append(f"{path}: skipped (no {kind} QA file for it)")
            continue
        try:
            fmt = detect_format(path)
        except InputError as exc:
            notes.append(f"skipped {exc}")
            continue
        if fmt not in ("trec_run", "stark_eval", "table"):
            notes.append(f"{path}: skipped (a {fmt.replace('_', ' ')} file, not a run)")
            continue
        drop: set[int] = set()
        if fmt == "stark_eval":
            drop, found = checks.check_stark_eval(path)
            notes += found
        run = load_run(path, fmt)
        if drop:
            run = run.drop_duplicates(["query_id", "doc_id", "rank"], ignore_index=True)
        domain = domains[kind]
        run["query_id"] = domain.rekey(run["query_id"], path, notes)
        qids = set(run["query_id"].astype("str"))
        if fmt == "stark_eval":
            message = checks.idx_instead_of_query_id(
                path, qids, domain.queries["query_id"].tolist()
            )
            if message:
                notes.append(message)
        covered = len(qids & domain.ids)
        if kind == "human" and prime and 0 < covered < len(domain.ids):
            notes.append(
                f"{path}: covers {covered} of the {len(domain.ids)} human queries (Prime's "
                "human set has a 98-row and a 109-row release: was the run made on the other?)"
            )
        runs[kind][model] = run_frame(run)
    return runs


def import_stark(
    root: str | Path,
    out: str | Path,
    *,
    skb: str | Path | None = None,
    name: str | None = None,
) -> ImportResult:
    """Import a STaRK domain folder as a bundle at ``out`` (see the module docstring).

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
    notes: list[str] = []
    domains: dict[str, _Domain] = {}
    for kind, names in (("synthesized", QA_NAMES), ("human", HUMAN_NAMES)):
        path = _find(src, names)
        if path is not None:
            domains[kind] = _Domain(kind, path)
    if not domains:
        raise InputError(src, None, "no stark_qa.csv or stark_qa_human_generated_eval.csv here")
    if "synthesized" in domains and domains["synthesized"].convention == "old":
        notes.append(
            f"{domains['synthesized'].path}: Amazon query ids of the old convention (each query's "
            "id is one of its own answers: the seed product); the current release numbers them by "
            "rank; files keyed by the other convention are re-keyed"
        )
    if "human" in domains and "prime" in name.lower():
        found = checks.prime_human_note(domains["human"].path, len(domains["human"].queries))
        if found:
            notes.append(found)

    splits: dict[str, list[str]] = {}
    if "synthesized" in domains:
        syn = domains["synthesized"]
        for path in sorted((src / "split").glob("*.index")):
            table = read_split_index(path)
            ids = syn.rekey(table["query_id"], path, notes)
            splits[path.name.removesuffix(".index")] = ids.astype("str").tolist()
    runs = _load_runs(src, domains, notes, prime="prime" in name.lower())
    entities = edges = None
    if skb is None:
        notes.append(
            "no --skb: entities are bare node ids; pass the SKB folder (the processed/ folder "
            "stark_qa.load_skb downloads) for their names and text"
        )
    else:
        from analysis.io.skb import read_skb

        kb = read_skb(skb, _domain_of(name))
        entities, edges = kb.entities, kb.edges
        notes += kb.notes

    datasets = []
    for kind, domain in domains.items():
        queries = domain.queries.drop(columns=["old_id"], errors="ignore")
        queries = queries.assign(query_type=kind)
        for folder, reader in (("query_groups", _groups), ("metapaths", _metapaths)):
            tables = []
            for path in sorted((src / folder).glob("*.json")):
                if _kind_of(path) == kind:
                    table = reader(path)
                    table["query_id"] = domain.rekey(table["query_id"], path, notes)
                    tables.append(table)
            queries = _slices(queries, tables)
        ds_splits = splits if kind == "synthesized" else {}
        datasets.append(
            ImportedDataset(
                name=f"{name}-{kind}",
                family="stark",
                queries=queries,
                qrels=domain.qrels,
                metrics=METRICS,
                entities=entities,
                edges=edges,
                runs=runs.get(kind, {}),
                splits=ds_splits,
                default_split="test" if "test" in ds_splits else None,
                description=f"STaRK {name} {kind} queries ({domain.path.name})",
            )
        )
    write_bundle(target, name, datasets, description=f"STaRK {name}, imported from {src.name}")
    return ImportResult(out=target, datasets=datasets, notes=notes)


def _kind_of(path: Path) -> str:
    return "human" if "human" in path.name.lower() else "synthesized"


def _domain_of(name: str) -> str | None:
    lower = name.lower()
    return next((d for d in ("amazon", "mag", "prime") if d in lower), None)
