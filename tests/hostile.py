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
EMOJI = ":smile:"
MAIL = "mail@evil.example"
WWW = "www.evil.example"
#: Every payload (a substring no page may render as Markdown).
ATOMS = (BOLD, KATEX, RED, ICON, HTML_B, LINK, TEMPLATE, EMOJI, MAIL, WWW)
#: Bare URLs and addresses Markdown would link even with every character escaped.
LINK_ATOMS = ("http://evil.example", WWW, MAIL)
#: Payloads plotly would read as markup or a template field in any figure string.
PLOTLY_ATOMS = (HTML_B, TEMPLATE, "<a href")
#: Payloads ``st.html`` must hold escaped.
HTML_ATOMS = (HTML_B, "<img src=x")

DATASET = f"web {BOLD} {KATEX} {RED} {ICON} {HTML_B} {LINK} {TEMPLATE} {EMOJI} {MAIL} {WWW}"
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
    for model, shift in (("a", 1), ("b", 2)):
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


#: An Open data folder whose name is payloads (a file name cannot hold "/").
NAMED_FOLDER = f"named {RED} {KATEX} {EMOJI} {TEMPLATE}"
#: A word in every line of the files outside the roots: no page may ever show it.
SECRET = "SECRET"


def make_open_data_tree(roots: Path, outside: Path) -> None:
    """Folders for the Open data page under ``roots``, with links into ``outside`` (created):
    ``web`` (a qrels and a run, a link to a run inside, links out: ``split.index`` to a
    passwd-like file, ``leak_qrels.txt``, the folder ``sub``), ``out-folder`` (a link out),
    ``stark`` (a STaRK QA file and a ``split`` folder linking out), ``deep`` (an
    ``entities.json`` nested 50,000 levels and a split file of 4,096 NUL bytes), a folder and
    files whose names are payloads, and ``many`` (10,001 split files)."""
    outside.mkdir(parents=True)
    (outside / "passwd").write_text("".join(f"user{i}:x:{i}:{SECRET}-{i}\n" for i in range(20)))
    (outside / "qrels.txt").write_text(f"q1 0 {SECRET}-doc 1\n")
    web = roots / "web"
    web.mkdir()
    (web / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (web / "good.run").write_text("q1 Q0 d1 1 2.0 t\nq2 Q0 d9 1 1.0 t\n")
    (web / "split.index").symlink_to(outside / "passwd")
    (web / "leak_qrels.txt").symlink_to(outside / "qrels.txt")
    (web / "inside.run").symlink_to(web / "good.run")  # stays inside: an ordinary file
    (web / "sub").symlink_to(outside, target_is_directory=True)
    (roots / "out-folder").symlink_to(outside, target_is_directory=True)
    stark = roots / "stark"
    stark.mkdir()
    (stark / "stark_qa.csv").write_text('id,query,answer_ids\n1,a,"[5]"\n')
    (stark / "split").symlink_to(outside, target_is_directory=True)
    deep = roots / "deep"
    deep.mkdir()
    (deep / "entities.json").write_text("[" * 50_000 + "]" * 50_000)
    (deep / "test.index").write_bytes(b"\0" * 4096)
    named = roots / NAMED_FOLDER
    named.mkdir()
    (named / f"{BOLD} {LINK.replace('/', '_')}.txt").write_text("q1 0 d1 1\n")
    (named / f"{TEMPLATE} {EMOJI}.run").write_text("q1 Q0 d1 1 1.0 t\n")
    many = roots / "many"
    many.mkdir()
    for i in range(10_001):
        (many / f"f{i:05d}.index").write_text(f"q{i}\n")
