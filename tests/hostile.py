"""A hostile bundle: every name the bundle format lets a data file choose is Markdown, KaTeX,
Streamlit directives, HTML, a link or a plotly template, so the page tests can look for any of
them rendered as markup.

What the format lets data name (and where each name comes from):

* the bundle's name and description (``bundle.toml``);
* dataset names (quoted TOML keys: any text), split names (keys of ``splits``), model names
  (keys of a ``runs`` table; a runs folder would take file stems);
* slice columns and values (the queries file's column names and cells), query and document
  ids, entity names and texts;
* tags, notes and authors (typed by users; written to the notes database here).

Each payload is one of :data:`ATOMS`; a rendered page must never hold an atom in a string
Streamlit reads as Markdown, nor :data:`PLOTLY_ATOMS` in a plotly figure, nor
:data:`HTML_ATOMS` unescaped in ``st.html``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

BOLD = "**bold**"
KATEX = "$x^2$"
RED = ":red[red]"
ICON = ":material/home:"
HTML_B = "<b>b</b>"
LINK = "[link](http://evil.example/x)"
TEMPLATE = "%{x}X%{y}"
#: Every payload (a substring no page may render as Markdown).
ATOMS = (BOLD, KATEX, RED, ICON, HTML_B, LINK, TEMPLATE)
#: Payloads plotly would read as markup or a template field in any figure string.
PLOTLY_ATOMS = (HTML_B, TEMPLATE, "<a href")
#: Payloads ``st.html`` must hold escaped.
HTML_ATOMS = (HTML_B, "<img src=x")

DATASET = f"web {BOLD} {KATEX} {RED} {ICON} {HTML_B} {LINK} {TEMPLATE}"
MODEL_A = f"bm25 {RED} {KATEX} {HTML_B}"
MODEL_B = f"dense {BOLD} {TEMPLATE} {LINK}"
SPLIT_TEST = f"test {KATEX} {BOLD}"
SPLIT_DEV = f"dev {RED} {ICON}"
SLICE = f"genre {RED} {KATEX}"
VALUES = (BOLD, KATEX, RED, ICON, HTML_B, LINK, TEMPLATE, "<img src=x onerror=alert(1)>")
TAGS = (f"tag {RED} {KATEX}", f"{HTML_B} {LINK}", "=1+2")
NOTE = f"note {BOLD} {RED} {HTML_B} {TEMPLATE}"
AUTHOR = f"reviewer {ICON} {KATEX}"
BUNDLE = f"bundle {RED} {KATEX}"
DESCRIPTION = f"about {BOLD} {ICON} {LINK}"
N_QUERIES = 48
#: Query ids in both splits that :func:`annotate` annotates.
SHOWN = ("q21", "=1+2")


def _toml(text: str) -> str:
    """A TOML basic string holding ``text``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def make_hostile_bundle(folder: Path) -> Path:
    """Write the hostile bundle into ``folder`` (created): one spatial dataset :data:`DATASET`
    with two splits, two models, a slice column :data:`SLICE` whose values are the payloads,
    entity names and texts holding payloads, and query ids ``q0``.. (``q20`` is ``=1+2``: a
    formula for the CSV exports); the splits overlap in ``q16``..``q31`` (``q20`` is ``=1+2``),
    so :data:`SHOWN` is in both. Returns ``folder``."""
    data = folder / "data"
    data.mkdir(parents=True)
    qids = [f"q{i}" if i != 20 else "=1+2" for i in range(N_QUERIES)]
    docs = [f"d{i}" for i in range(2 * N_QUERIES)]
    pd.DataFrame(
        {
            "query_id": qids,
            "text": [f"find {VALUES[i % len(VALUES)]} near here {i}" for i in range(N_QUERIES)],
            "lat": [39.90 + 0.001 * i for i in range(N_QUERIES)],
            "lon": [116.40 + 0.001 * i for i in range(N_QUERIES)],
            SLICE: [VALUES[i % len(VALUES)] for i in range(N_QUERIES)],
        }
    ).to_parquet(data / "queries.parquet")
    pd.DataFrame(
        {
            "doc_id": docs,
            "name": [f"poi {VALUES[i % len(VALUES)]}" for i in range(len(docs))],
            "text": [f"about {VALUES[(i + 3) % len(VALUES)]}" for i in range(len(docs))],
            "type": "poi",
            "lat": [39.90 + 0.001 * (i // 2) for i in range(len(docs))],  # pairs stack
            "lon": [116.40 + 0.001 * (i // 2) for i in range(len(docs))],
        }
    ).to_parquet(data / "entities.parquet")
    pd.DataFrame({"query_id": qids, "doc_id": docs[:N_QUERIES], "relevance": 1}).to_parquet(
        data / "qrels.parquet"
    )
    for model, shift in (("a", 0), ("b", 2)):
        rows = [
            (q, docs[(j + (shift if j % 3 else 0) + k) % len(docs)], float(10 - k))
            for j, q in enumerate(qids)
            for k in range(10)
        ]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
        frame.to_parquet(data / f"run_{model}.parquet")
    (data / "test.index").write_text("".join(f"{q}\n" for q in qids[:32]))
    (data / "dev.index").write_text("".join(f"{q}\n" for q in qids[16:]))
    (folder / "bundle.toml").write_text(
        f"name = {_toml(BUNDLE)}\ndescription = {_toml(DESCRIPTION)}\n\n"
        f"[datasets.{_toml(DATASET)}]\n"
        'family = "spatial"\nqueries = "data/queries.parquet"\nqrels = "data/qrels.parquet"\n'
        'entities = "data/entities.parquet"\nmetrics = ["recall@10", "ndcg@10", "mrr"]\n'
        f"runs = {{ {_toml(MODEL_A)} = 'data/run_a.parquet', "
        f"{_toml(MODEL_B)} = 'data/run_b.parquet' }}\n"
        f"splits = {{ {_toml(SPLIT_TEST)} = 'data/test.index', "
        f"{_toml(SPLIT_DEV)} = 'data/dev.index' }}\n"
        f"split = {_toml(SPLIT_TEST)}\n"
    )
    return folder


def annotate(bundle: Path, notes: Path) -> None:
    """Write :data:`TAGS`, :data:`NOTE` (by :data:`AUTHOR`) and a judgement on the queries of
    :data:`SHOWN` into the bundle's notes database in ``notes``."""
    from analysis.io.annotations import AnnotationStore

    store = AnnotationStore.for_bundle(bundle, notes)
    for query_id in SHOWN:
        for tag in TAGS:
            store.add_tag(DATASET, query_id, tag, author=AUTHOR)
        store.set_note(DATASET, query_id, NOTE, author=AUTHOR)
        store.set_judgement(DATASET, query_id, "d1", 0, author=AUTHOR)
