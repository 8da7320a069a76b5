"""The AppTest harness of this folder: what ``tests/app/conftest.py`` changes in Streamlit's
test runner still has the effect it is there for."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import keeps_caches
from tests.conftest import LAST_TEST

#: the node id of this file's first test, once it has run
_FIRST: list[str] = []


def test_the_process_remembers_the_test_it_ran_last(request):
    """Recorded at every test's teardown: the next test sees this one (checked below)."""
    _FIRST.append(request.node.nodeid)
    assert request.session.stash.get(LAST_TEST, None) != request.node.nodeid


def test_the_last_test_is_the_one_just_before(request):
    last = request.session.stash.get(LAST_TEST, None)
    assert last != request.node.nodeid
    if _FIRST:  # run after the test above, with nothing between them (one file, in order)
        assert last == _FIRST[0]


def test_caches_are_shared_only_with_the_test_just_before_on_the_same_root():
    """A test outside tests/app (the command line's no-write checks, the examples) may run
    pages on another root between two tests of the demo: their caches are then cleared."""
    assert keeps_caches(("demo", "tests/app/a.py::t"), "demo", "tests/app/a.py::t")
    assert not keeps_caches(("demo", "tests/app/a.py::t"), "demo", "tests/cli/b.py::u")
    assert not keeps_caches(("demo", "tests/app/a.py::t"), "prime", "tests/app/a.py::t")
    assert not keeps_caches(None, "demo", "tests/app/a.py::t")
    assert not keeps_caches(("demo", "tests/app/a.py::t"), None, "tests/app/a.py::t")


def test_each_apptest_scans_components_through_the_function_the_conftest_caches(monkeypatch):
    """The conftest answers Streamlit's component scan from one scan per process; if AppTest
    stopped calling ``manifest_scanner.scan_component_manifests``, that cache would silently
    do nothing (and each AppTest would read every installed package's metadata again)."""
    from streamlit.components.v2 import manifest_scanner

    calls: list[int] = []
    cached = manifest_scanner.scan_component_manifests

    def counted(max_workers=None):
        calls.append(1)
        return cached(max_workers)

    monkeypatch.setattr(manifest_scanner, "scan_component_manifests", counted)
    for _ in range(2):
        AppTest.from_string("import streamlit as st\nst.write('ok')").run()
    assert calls == [1, 1]
