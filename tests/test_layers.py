"""The library's folders are its layers: a lower layer never imports a higher one, the library
never imports streamlit or the demo generator, and no module imports itself back in a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Layers of ``analysis``, lowest first; a module may import its own layer and lower ones.
LAYERS = ("core", "geo", "baselines", "io", "stats", "present", "cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every module named by an import statement anywhere in the file (deferred ones too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = (
        _module_name(path) if path.name == "__init__.py" else _module_name(path).rsplit(".", 1)[0]
    )
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1]
                    + ([base] if base else [])
                )
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _graph(folder: str) -> dict[str, set[str]]:
    files = sorted((ROOT / folder).rglob("*.py"))
    modules = {_module_name(p): p for p in files}
    return {
        name: {m for m in _imports(p) if m in modules and m != name} for name, p in modules.items()
    }


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return None
    return LAYERS.index(parts[1])


def test_every_library_module_is_in_a_layer() -> None:
    loose = [m for m in _graph("analysis") if m.count(".") >= 1 and _layer(m) is None]
    assert loose in ([], ["analysis.__main__"]), loose


def test_no_lower_layer_imports_a_higher_one() -> None:
    bad = []
    for module, targets in _graph("analysis").items():
        mine = _layer(module)
        for target in targets:
            theirs = _layer(target)
            if mine is not None and theirs is not None and theirs > mine:
                bad.append(f"{module} -> {target}")
    assert not bad, bad


@pytest.mark.parametrize("forbidden", ["streamlit", "demo", "ui"])
def test_library_never_imports(forbidden: str) -> None:
    bad = [
        f"{_module_name(p)} -> {m}"
        for p in (ROOT / "analysis").rglob("*.py")
        for m in _imports(p)
        if m == forbidden or m.startswith(forbidden + ".")
    ]
    # the `demo` command is the one door from the CLI to the demo generator
    bad = [b for b in bad if not b.startswith("analysis.cli.demo -> demo")]
    assert not bad, bad


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            # a package __init__ re-exporting its own modules is not a cycle between concerns
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def _without_parent_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Importing ``a.b.c`` runs ``a.b``'s ``__init__``; that edge is Python's, not a design one."""
    return {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}


@pytest.mark.parametrize("folder", ["analysis", "ui", "demo"])
def test_no_import_cycles(folder: str) -> None:
    assert _cycles(_without_parent_packages(_graph(folder))) == []
