"""Functions short enough to read at once: none over 80 lines in the library, the Streamlit glue
or the pages (docstring included), outside the demo generator.

``STILL_LONG`` names the functions that are still longer, to be split (none now); the test
fails when another function grows past the limit, and when a listed one is split (so the list
only shrinks). ``python -m tests.test_code_shape`` prints every function over the limit."""

from __future__ import annotations

import ast

from tests.helpers import ROOT

LIMIT = 80
FOLDERS = ("analysis", "ui", "pages")
STILL_LONG: set[str] = set()


def long_functions(limit: int = LIMIT) -> dict[str, int]:
    """``path:function`` -> its number of lines, for every function over ``limit`` lines."""
    out = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    lines = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                    if lines > limit:
                        out[f"{path.relative_to(ROOT).as_posix()}:{node.name}"] = lines
    return out


def test_no_new_function_over_80_lines() -> None:
    assert sorted(set(long_functions()) - STILL_LONG) == []


def test_the_list_of_long_functions_only_shrinks() -> None:
    assert sorted(STILL_LONG - set(long_functions())) == []


if __name__ == "__main__":
    for name, lines in sorted(long_functions().items(), key=lambda item: -item[1]):
        print(f"{lines:4d} {name}")
