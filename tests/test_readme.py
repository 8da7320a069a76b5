"""The README a newcomer reads first: its links lead to files of the project, and its test
command is the one CI runs."""

from __future__ import annotations

import re

import pytest

from tests.helpers import ROOT

DOCS = ["README.md", "bench/README.md", "data/README.md"]


@pytest.mark.parametrize("doc", DOCS)
def test_every_relative_link_and_image_exists(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+://|#|mailto:", t)]
    assert local or doc != "README.md"
    missing = [t for t in local if not ((ROOT / doc).parent / t).exists()]
    assert not missing, f"{doc} links to missing files: {missing}"


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (command,) = re.findall(
        r"pip install -r requirements-dev\.txt && (python -m pytest[^\n`]*)", readme
    )
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert ci[-1] == command
