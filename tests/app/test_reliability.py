"""AppTest: small datasets (1 to 5 queries) on every page and in the report, duplicated URL
lists, uploads kept per browser session, and the per-query cache sized per bundle."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from analysis.present.report import write_report
from tests.app.conftest import ROOT, leaderboards, no_exception, open_directly, open_page
from tests.bad_input.corpus import HERE
from ui import data

PAGES = [None, *(p.name for p in sorted((ROOT / "pages").glob("*.py")))]


def _bundle(folder: Path, n_queries: int, datasets: tuple[str, ...] = ("web",)) -> Path:
    """Generic datasets of ``n_queries`` queries and two models: ``bm25`` finds every gold doc at
    rank 1, ``dense`` at rank 2 for odd queries (so the models differ)."""
    manifest = 'name = "tiny"\n'
    for ds in datasets:
        runs = folder / ds / "runs"
        runs.mkdir(parents=True)
        ids = [f"q{i}" for i in range(1, n_queries + 1)]
        (folder / ds / "queries.csv").write_text(
            "query_id,text,kind\n"
            + "".join(f"{q},query {q},{'ab'[i % 2]}\n" for i, q in enumerate(ids))
        )
        (folder / ds / "qrels.txt").write_text("".join(f"{q} 0 d{q} 1\n" for q in ids))
        (runs / "bm25.run").write_text(
            "".join(f"{q} Q0 d{q} 1 2.0 bm25\n{q} Q0 x{q} 2 1.0 bm25\n" for q in ids)
        )
        (runs / "dense.run").write_text(
            "".join(
                f"{q} Q0 x{q} 1 2.0 dense\n{q} Q0 d{q} 2 1.0 dense\n"
                if i % 2
                else f"{q} Q0 d{q} 1 2.0 dense\n"
                for i, q in enumerate(ids)
            )
        )
        manifest += (
            f'\n[datasets.{ds}]\nfamily = "generic"\nqueries = "{ds}/queries.csv"\n'
            f'qrels = "{ds}/qrels.txt"\nruns = "{ds}/runs"\n'
        )
    (folder / "bundle.toml").write_text(manifest)
    return folder


@pytest.mark.parametrize("n_queries", [1, 2, 3, 4, 5])
def test_datasets_of_one_to_five_queries_render_every_page_and_the_report(
    roots: Path, tmp_path: Path, n_queries: int
) -> None:
    bundle = _bundle(roots / "tiny", n_queries)
    for page in PAGES:
        at = open_directly(page)
        no_exception(at)
        assert not at.error, (page, [e.value for e in at.error])
    out = tmp_path / "report.html"
    write_report(bundle, out, model_a="bm25", model_b="dense")
    html = out.read_text(encoding="utf-8")
    assert "bm25" in html
    assert "dense" in html


@pytest.mark.parametrize(
    "shape", ["two_queries_ragged", "one_query", "no_relevant", "model_missing_queries", "unjudged"]
)
def test_every_page_on_hostile_tiny_datasets(roots: Path, tmp_path: Path, shape: str) -> None:
    """The report corpus' tiny bundles (ragged lists, texts of different lengths, one model, a
    model missing queries, no relevant document) and qrels judging no query of the run: every
    page runs without an exception or an error message."""
    if shape == "unjudged":
        from tests.present.test_report_tiny import _unjudged

        _unjudged(roots / shape)
    else:
        shutil.copytree(HERE / "report" / shape, roots / shape)
    for page in PAGES:
        at = open_directly(page)
        no_exception(at)
        assert not at.error, (page, [e.value for e in at.error])


def test_a_dataset_named_twice_in_the_url_counts_once(roots: Path) -> None:
    _bundle(roots / "two", 3, datasets=("beijing", "shanghai"))
    at = open_page(datasets="beijing,beijing")
    no_exception(at)
    assert at.selectbox(key="w_dataset").value == "beijing"
    bundle = data.load_bundle((roots / "two").resolve())
    table, _, _ = data.per_query(bundle, ["beijing", "beijing"], "trec_eval")
    assert len(table) == 3 * 2  # 3 queries x 2 models, not twice that


def _upload(at, name: str, content: bytes):
    at.file_uploader(key="upload_file").set_value((name, content, ""))
    at.run()
    no_exception(at)
    return at


def _upload_row(at) -> dict:
    board = leaderboards(at)
    assert board is not None, "no leaderboard"
    rows = board[board["model"] == "upload:mine"]
    assert len(rows) == 1
    return rows.iloc[0].to_dict()


def test_uploads_of_one_name_stay_in_their_own_session(roots: Path) -> None:
    _bundle(roots / "tiny", 3)
    perfect = b"".join(f"q{i} Q0 dq{i} 1 1.0 u\n".encode() for i in range(1, 4))
    useless = b"".join(f"q{i} Q0 nothing{i} 1 1.0 u\n".encode() for i in range(1, 4))
    first = _upload(open_page(), "mine.run", perfect)
    second = _upload(open_page(), "mine.run", useless)
    row_first, row_second = _upload_row(first), _upload_row(second)
    assert row_first != row_second  # same file name, other content: other numbers
    first.run()  # the first session still sees its own run
    assert _upload_row(first) == row_first
    alone = _upload(open_page(), "other-name.run", useless)
    assert "upload:mine" not in alone.selectbox(key="w_model_a").options  # never shared


def test_the_per_query_cache_holds_a_hundred_dataset_bundle(roots: Path) -> None:
    names = tuple(f"d{i:03d}" for i in range(100))
    _bundle(roots / "many", 2, datasets=names)
    bundle = data.load_bundle((roots / "many").resolve())
    data.per_query(bundle, list(names), "trec_eval")
    store = data._per_query_store()
    assert len(store) == 100  # nothing evicted by the selection itself
    calls: list[str] = []
    real = data._compute_per_query

    def spy(spec, ties, upload_key):
        calls.append(spec.name)
        return real(spec, ties, upload_key)

    data._compute_per_query = spy  # type: ignore[assignment]
    try:
        data.per_query(bundle, list(names), "trec_eval")
    finally:
        data._compute_per_query = real  # type: ignore[assignment]
    assert calls == []  # a rerun is served from the cache
    assert store.capacity <= data._LRU.CEILING


def test_the_dataset_cache_holds_a_hundred_dataset_bundle(
    roots: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"d{i:03d}" for i in range(100)]
    _bundle(roots / "many", 2, datasets=tuple(names))
    bundle = data.load_bundle((roots / "many").resolve())
    first = [data.dataset(bundle, name) for name in names]
    loads: list[str] = []
    real = data.load_dataset
    monkeypatch.setattr(data, "load_dataset", lambda spec: loads.append(spec.name) or real(spec))
    again = [data.dataset(bundle, name) for name in names]
    assert loads == []  # the second pass over every dataset is served from the cache
    assert all(a is b for a, b in zip(first, again, strict=True))


class _Stop(BaseException):
    """Stands for Streamlit stopping a script run in the middle (not an error of the data)."""


def _concurrently(store: data._LRU, first, second) -> tuple[list, list]:
    """``store.get`` of one key by two threads, the second asking while the first computes;
    returns what each got (a value, or the exception raised)."""
    import threading

    started, release = threading.Event(), threading.Event()
    out: tuple[list, list] = ([], [])

    def run(make, box) -> None:
        try:
            box.append(store.get(("key",), make))
        except BaseException as exc:  # recorded for the test
            box.append(exc)

    def slow():
        started.set()
        release.wait(10)
        return first()

    owner = threading.Thread(target=run, args=(slow, out[0]))
    owner.start()
    started.wait(10)
    waiter = threading.Thread(target=run, args=(second, out[1]))
    waiter.start()
    waiter.join(0.1)  # the second caller is waiting now (or has yet to ask: the same outcome)
    release.set()
    owner.join(10)
    waiter.join(10)
    return out


def test_one_key_is_computed_once_when_two_sessions_ask_together() -> None:
    store = data._LRU()
    made: list[str] = []
    value = object()
    got = _concurrently(store, lambda: made.append("first") or value,
                        lambda: made.append("second") or object())  # fmt: skip
    assert made == ["first"]
    assert got[0] == [value]
    assert got[1] == [value]


def test_an_error_reaches_every_waiting_session_and_is_not_cached() -> None:
    store = data._LRU()

    def fail():
        raise ValueError("bad file")

    got = _concurrently(store, fail, lambda: "never")
    assert isinstance(got[0][0], ValueError)
    assert isinstance(got[1][0], ValueError)
    assert store.get(("key",), lambda: "fixed") == "fixed"  # computed again, not the error


def test_a_stopped_computation_is_done_by_the_session_that_waited() -> None:
    store = data._LRU()

    def stop():
        raise _Stop

    got = _concurrently(store, stop, lambda: "mine")
    assert isinstance(got[0][0], _Stop)
    assert got[1] == ["mine"]
    assert store.get(("key",), lambda: "other") == "mine"


def test_an_upload_that_cannot_be_stored_is_one_error_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    from analysis.core.errors import InputError

    def full(self, content):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    with pytest.raises(InputError) as info:
        data._read_upload("mine.run", b"q1 Q0 d1 1 1.0 x\n")
    assert str(info.value) == "mine.run: cannot be stored for reading: no space left on the device"


def test_a_changed_manifest_entry_is_a_new_cache_key() -> None:
    """Cached functions taking a dataset's manifest entry key it by its ``repr``
    (``data.SPEC_HASH``): an entry that differs in any field, here its run metadata or its
    relevance threshold, is computed anew, not served the other entry's value."""
    import dataclasses

    from analysis.io.bundle import read_manifest

    spec = next(iter(read_manifest(ROOT / "data" / "demo").datasets.values()))
    model = next(iter(spec.runs))
    cheap = dataclasses.replace(spec, run_metadata={model: {"cost": 1.0}})
    dear = dataclasses.replace(spec, run_metadata={model: {"cost": 2.0}})
    assert data._run_metadata(cheap, ())[model]["cost"] == 1.0
    assert data._run_metadata(dear, ())[model]["cost"] == 2.0
    assert data.SPEC_HASH[type(spec)](cheap) != data.SPEC_HASH[type(spec)](
        dataclasses.replace(cheap, relevance_threshold=2)
    )
