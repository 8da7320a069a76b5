"""Open data: turn a folder of benchmark files under the data roots into a bundle.

Choose a folder; every data file is listed with its detected format, the roles it can play and
its first problem in words. A folder in a known layout (an importer of
:mod:`analysis.io.importers.registry` detects it) is imported in one click; otherwise pick the
queries, qrels, entities, runs and splits, check the counts, and write the bundle. Bundles are
written as Parquet under ``_opened/`` in the first writable data root (input files are only
read), then opened with one click.
"""

from __future__ import annotations

import streamlit as st

from analysis.core.errors import InputError
from analysis.io import importers
from analysis.io.importers import registry
from ui import jobs, open_data, widgets
from ui.state import sidebar

st.set_page_config(page_title="Open data", layout="wide")
sel = sidebar()

st.title("Open data")
st.caption(
    "Pick a folder under the data roots. Files are only read; the bundle is written as Parquet "
    "into _opened/ of a writable data root."
)

choices = open_data.folders()
if not choices:
    st.error("No folder under the data roots.")
    st.stop()
folder_id = st.selectbox(
    "Folder", list(choices), index=None, placeholder="Choose a folder", key="od_folder"
)
open_data.prefetch_scans(choices)
if folder_id is None:
    st.info("Choose a folder to see its files.")
    st.stop()
folder = choices[folder_id]
# the widgets below are keyed by folder: choosing another folder starts afresh
files, total, more = jobs.need("Reading the folder's files", open_data.scan, folder)
if files.empty:
    st.info("This folder holds no data file.")
    st.stop()

st.subheader("Files")
st.caption("Detected format, the roles a file can play, its rows, and its first problem.")
note = open_data.shown_note(files, total, more)
if note:
    st.warning(note)
st.dataframe(files, hide_index=True, width="stretch", key="od_files")

name = open_data.safe_name(
    st.text_input("Bundle name", value=folder.name, key=f"od_name:{folder_id}")
)
out = open_data.output_folder(name)
if out is None:
    st.error(
        "No data root is writable: add a writable folder to RETRIEVAL_DASHBOARD_DATA_ROOTS "
        "to write bundles."
    )
    st.stop()
st.text(f"The bundle will be written to {out}")


def _done(result: importers.ImportResult) -> None:
    open_data.remember(result.out)
    for line in result.summary():
        st.text(line)
    for note in result.notes:
        st.warning(widgets.escape_markdown(note))


outside = open_data.refused_links(folder)  # an importer would follow them: none is offered
if outside:
    st.error(widgets.escape_markdown(
        f"{len(outside)} link(s) in this folder lead outside the data roots (first: "
        f"{outside[0].relative_to(folder)}); they are not read, and no importer is offered."
    ))  # fmt: skip
importer = None if outside else registry.suggest(folder)
if importer is not None:
    st.subheader(f"Import as {importer.name}")
    st.caption(f"The folder has this benchmark's layout ({importer.help}); the importer reads "
               "all of it.")  # fmt: skip
    choices: dict[str, object] = {"name": name}
    if importer.crs == "required":
        choices["crs"] = st.text_input(
            "CRS of the coordinates (one for the dataset)",
            importer.crs_default or "",
            key=f"od_crs:{folder_id}",
            help=importer.crs_help,
        )
    if importer.baselines:
        choices["baselines"] = st.checkbox("Add baseline runs", key=f"od_baselines:{folder_id}")
    if st.button(f"Import as {importer.name}", key=f"od_import:{folder_id}"):
        try:
            with st.spinner("Importing…"):
                _done(registry.run_importer(importer, folder, out, choices))
        except InputError as exc:
            st.error(widgets.escape_markdown(str(exc)))

st.subheader("Or choose the files")
usable = files[files["problem"] == ""]


def _options(role: str) -> list[str]:
    return [
        f
        for f, roles in zip(usable["file"], usable["roles"], strict=True)
        if role in roles.split(", ")
    ]


left, right = st.columns(2)
with left:
    queries = st.multiselect("Queries", _options("queries"), key=f"od_queries:{folder_id}")
    qrels = st.multiselect("Qrels (required)", _options("qrels"), key=f"od_qrels:{folder_id}")
    entity = st.selectbox(
        "Entities", ["(none)", *_options("entities")], key=f"od_entities:{folder_id}"
    )
with right:
    runs = st.multiselect("Runs (one model each)", _options("run"), key=f"od_runs:{folder_id}")
    splits = st.multiselect("Splits", _options("split"), key=f"od_splits:{folder_id}")
    groups = st.multiselect("Query groups", _options("query_groups"), key=f"od_groups:{folder_id}")
    paths = st.multiselect("Metapaths", _options("metapaths"), key=f"od_metapaths:{folder_id}")

picked = [
    (role, f)
    for role, chosen in (
        ("queries", queries),
        ("qrels", qrels),
        ("entities", [] if entity == "(none)" else [entity]),
        ("run", runs),
        ("split", splits),
        ("query groups", groups),
        ("metapaths", paths),
    )
    for f in chosen
]
if picked:
    rows = dict(zip(usable["file"], usable["rows"], strict=True))
    st.caption("Preview: rows per chosen file.")
    st.dataframe(
        [{"role": role, "file": f, "rows": rows.get(f)} for role, f in picked],
        hide_index=True,
        key=f"od_preview:{folder_id}",
    )
if st.button("Write bundle", key=f"od_write:{folder_id}", disabled=not qrels):
    try:
        with st.spinner("Writing the bundle…"):
            _done(
                open_data.build_bundle(
                    out,
                    name,
                    qrels=[folder / f for f in qrels],
                    queries=[folder / f for f in queries],
                    entities=None if entity == "(none)" else folder / entity,
                    runs=[folder / f for f in runs],
                    splits=[folder / f for f in splits],
                    query_groups=[folder / f for f in groups],
                    metapaths=[folder / f for f in paths],
                )
            )
    except InputError as exc:
        st.error(widgets.escape_markdown(str(exc)))

made = open_data.written()
if made is not None and (made / "bundle.toml").is_file():
    st.success(widgets.escape_markdown(f"Bundle written: {made}"))
    if st.button("Open it", key="od_open", type="primary"):
        open_data.open_bundle(made)
