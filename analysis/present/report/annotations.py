"""The report's "Annotations" section: what reviewers wrote in the bundle's notes database
(:mod:`analysis.io.annotations`), per dataset -- the tags (how many queries, by whom), and the
headline metrics with the reviewers' judgements applied *beside* the strict ones
(:func:`analysis.stats.coverage.strict_and_amended`; the strict numbers are never replaced).

The section is left out when the bundle has no notes database or nothing is written for the
selected datasets; the report never creates a database. Names from the database (tags,
authors) are data text: the writers escape them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from analysis.core.errors import InputError
from analysis.io.annotations import AnnotationStore, database_path
from analysis.present.report.model import Block, Section
from analysis.stats.coverage import strict_and_amended

INTRO = (
    "What reviewers recorded in this bundle's notes database: tags on queries, notes and "
    "judgements of documents. Metrics with the judgements applied (amended) stand beside the "
    "strict ones, which every other section uses."
)


def open_store(bundle_dir: Path, folder: Path | None = None) -> AnnotationStore | None:
    """The bundle's notes database when it exists (never created here), else ``None``; a notes
    folder the rules refuse (inside the bundle) also gives ``None``: the report goes on."""
    try:
        path = database_path(bundle_dir, folder)
    except InputError:
        return None
    return AnnotationStore(path) if path.is_file() else None


def annotation_blocks(
    store: AnnotationStore,
    dataset: str,
    runs: Mapping[str, pd.DataFrame],
    qrels: pd.DataFrame,
    metrics: Sequence[str],
    *,
    ties: str = "trec_eval",
    relevance_threshold: int = 1,
    index: int = 0,
) -> tuple[Block, ...]:
    """The blocks of one dataset, each title naming it: a tag table (``tag, queries, authors``)
    when there are tags (else how many notes), and the strict vs amended table (``model,
    metric, strict, amended, delta, queries_changed``) when there are judgements; none when
    nothing is written."""
    tags, judged = store.tags(dataset), store.judgements(dataset)
    n_notes = len(store.notes(dataset))
    if tags.empty and judged.empty and n_notes == 0:
        return ()
    blocks = []
    key = f"annotations-{index}"
    if not tags.empty:
        table = (
            tags.groupby("tag", sort=True)
            .agg(queries=("query_id", "nunique"), authors=("author", _names))
            .reset_index()
            .sort_values(["queries", "tag"], ascending=[False, True], kind="stable")
        )
        caption = f"{tags['query_id'].nunique()} tagged queries; {n_notes} notes."
        title = f"Tags on {dataset}"
        blocks.append(Block(f"{key}-tags", "table", title, caption, table=table, dataset=dataset))
    elif n_notes:
        text = (f"{n_notes} notes, no tags.",)
        blocks.append(
            Block(f"{key}-notes", "text", f"Notes on {dataset}", text=text, dataset=dataset)
        )
    if not judged.empty:
        both = strict_and_amended(
            runs, qrels, judged, list(metrics), ties=ties, relevance_threshold=relevance_threshold
        )
        keep = ["model", "metric", "strict", "amended", "delta", "queries_changed"]
        caption = (
            f"{len(judged)} judgements of {judged['query_id'].nunique()} queries by "
            f"{judged['author'].nunique()} reviewer(s); strict = the bundle's qrels."
        )
        blocks.append(
            Block(
                f"{key}-amended",
                "table",
                f"Strict and amended metrics on {dataset}",
                caption,
                table=both[keep],
                dataset=dataset,
            )
        )
    return tuple(blocks)


def annotations_section(
    found: Mapping[str, Sequence[Block]], datasets: Sequence[str]
) -> Section | None:
    """The section of every dataset's blocks, in the datasets' order, or ``None``."""
    blocks = tuple(b for name in datasets for b in found.get(name, ()))
    return Section("annotations", "Annotations", INTRO, blocks) if blocks else None


def _names(authors: pd.Series) -> str:
    return ", ".join(sorted({str(a) for a in authors}))
