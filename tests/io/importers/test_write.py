"""Writing an imported bundle (analysis.io.importers._write): run file names."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis.io import load_run
from analysis.io.bundle import read_manifest
from analysis.io.importers import write_bundle
from analysis.io.importers._write import ImportedDataset


def _run(doc: str) -> pd.DataFrame:
    return pd.DataFrame({"query_id": ["q"], "doc_id": [doc], "score": [1.0], "rank": [1]})


def _dataset(runs: dict[str, pd.DataFrame]) -> ImportedDataset:
    """A one-query generic dataset ``d`` (doc ``1`` relevant) with ``runs``."""
    return ImportedDataset(
        name="d",
        family="generic",
        queries=pd.DataFrame({"query_id": ["q"], "text": ["t"]}),
        qrels=pd.DataFrame({"query_id": ["q"], "doc_id": ["1"], "relevance": [1]}),
        metrics=["mrr"],
        runs=runs,
    )


def test_models_sharing_a_file_stem_keep_their_own_run_files(tmp_path: Path) -> None:
    # a/b and a__b both give the stem a__b; BM25 and bm25 are one file where case is ignored
    models = {"a/b": "1", "a__b": "2", "bm25": "3", "BM25": "4"}
    dataset = _dataset({model: _run(doc) for model, doc in models.items()})
    write_bundle(tmp_path / "out", "b", [dataset])
    spec = read_manifest(tmp_path / "out").datasets["d"]
    files = {model: spec.runs[model].name.casefold() for model in models}
    assert len(set(files.values())) == 4
    assert files["a/b"] == "a__b.parquet"
    assert files["bm25"] == "bm25.parquet"
    for model, doc in models.items():
        assert load_run(spec.runs[model])["doc_id"].tolist() == [doc], model


def test_an_out_folder_below_a_file_is_one_line(tmp_path: Path) -> None:
    """Making the folders of ``out`` raised NotADirectoryError / FileExistsError (a traceback)
    when a part of its path is a file; nothing is written."""
    import pytest

    from analysis.core.errors import InputError

    dataset = _dataset({"m": _run("1")})
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file" / "out", tmp_path / "file" / "sub" / "out"):
        with pytest.raises(InputError) as err:
            write_bundle(out, "b", [dataset])
        assert str(err.value).startswith(f"{out}: cannot write: ")
        assert "\n" not in str(err.value)
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
    assert (tmp_path / "file").read_text() == "x"
