"""The importer registry: one :class:`Importer` per benchmark layout.

Each importer module of this package declares its importers in a module-level ``IMPORTERS``
tuple (``stark.py``: STaRK; ``spatial.py``: GeoBloom, GeoGLUE, LIST); they are found the first
time the registry is read. The command line (``python -m analysis import <name>``: one
sub-command per importer, with its arguments and help), the folder scan's suggestion
(:func:`suggest`) and the app's Open data page (the CRS default, the baseline option) read
them. Adding an importer is one file in this package with an ``IMPORTERS`` tuple;
:func:`register_importer` adds one from elsewhere (a ``--plugin`` module, a test).

Detection: ``detect(folder)`` returns how well the folder's files match the layout, from 0 (not
this layout) to 1 (its defining files are there); :func:`suggest` takes the best match, the
earlier-registered importer on a tie. A detector that raises or returns no number in [0, 1]
counts as no match, so that one broken importer does not stop the folder scan.

:func:`register_importer` refuses, with one ``ValueError`` line, what would break the command
line of every importer: a name that is not a sub-command name (letters, digits, ``.``, ``_``,
``-``, at most 40, a letter or digit first), an option that is not ``--word`` or that is one of
the options every importer has (``--root``, ``--out``, ``--name``, ``--crs``, ``--baselines``,
``--plugin``, ``--help``), an option given twice. :func:`run_importer` runs one: what a
registered importer's own code raises (other than
:class:`~analysis.core.errors.InputError`) is one ``InputError`` line naming the importer and
the file and line of the failure.
"""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from analysis.core.errors import InputError
from analysis.core.measures import USER_FAILURES, failure_site, one_line

#: Importer options every importer takes besides ``root`` and ``out``.
COMMON = ("name",)


@dataclass(frozen=True)
class Argument:
    """A command-line option of one importer, passed to its ``run`` as keyword ``dest``.

    ``kind``: ``"value"`` (``--skb DIR``) or ``"flag"`` (``--easting-first``)."""

    flag: str
    help: str
    kind: Literal["value", "flag"] = "value"
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Importer:
    """One benchmark layout.

    Attributes:
        name: the sub-command (``python -m analysis import <name>``) and the Open data page's
            label.
        help: one line: what folder it reads.
        run: ``run(root, out, *, name=None, **options) -> ImportResult``; ``options`` are
            ``crs`` (when ``crs`` is not ``"none"``), ``baselines`` (when ``baselines``) and
            each argument's ``dest``.
        detect: ``detect(folder) -> float`` in [0, 1] (module docstring).
        crs: ``"none"`` (coordinates are WGS84 or absent) or ``"required"`` (projected
            coordinates: the dataset's one CRS must be given).
        crs_default: the CRS the Open data page proposes (e.g. ``"EPSG:32650"``).
        crs_help: what the CRS option means for this layout.
        baselines: the importer can add baseline runs (``--baselines``).
        arguments: its other options.
    """

    name: str
    help: str
    run: Callable[..., Any]
    detect: Callable[[Path], float]
    crs: Literal["none", "required"] = "none"
    crs_default: str | None = None
    crs_help: str = "the dataset's one projected CRS"
    baselines: bool = False
    arguments: tuple[Argument, ...] = field(default=())

    def options(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of :attr:`run` from ``values`` (a parsed command line as a
        dict, or the page's choices): ``name``, then ``crs``, ``baselines`` and each argument
        this importer takes; other keys are ignored."""
        keys = [*COMMON, *(["crs"] if self.crs != "none" else [])]
        keys += ["baselines"] if self.baselines else []
        keys += [a.dest for a in self.arguments]
        return {k: values[k] for k in keys if k in values}


_REGISTRY: dict[str, Importer] = {}
_FOUND: list[bool] = []


def _discover() -> None:
    """Register the ``IMPORTERS`` of every module of this package (once)."""
    if _FOUND:
        return
    _FOUND.append(True)
    package = importlib.import_module("analysis.io.importers")
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.name == "registry":
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for importer in getattr(module, "IMPORTERS", ()):
            _REGISTRY.setdefault(importer.name, importer)


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")
_FLAG = re.compile(r"^--[A-Za-z0-9][A-Za-z0-9-]{0,39}$")
#: The options every importer's sub-command has (module docstring).
RESERVED = ("--root", "--out", "--name", "--crs", "--baselines", "--plugin", "--help")


def _check(importer: object) -> Importer:
    """``importer`` when the command line can take it (module docstring).

    Raises:
        ValueError: one line naming what is wrong.
    """
    if not isinstance(importer, Importer):
        raise ValueError(f"register_importer takes an Importer, not a {type(importer).__name__}")
    name = importer.name
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"importer name {name!r:.60}: use 1-40 letters, digits, '.', '_' or '-' (a letter "
            "or digit first)"
        )
    if not callable(importer.run) or not callable(importer.detect):
        raise ValueError(f"importer {name!r}: run and detect must be callable")
    if importer.crs not in ("none", "required"):
        raise ValueError(f"importer {name!r}: crs is 'none' or 'required', not {importer.crs!r}")
    seen: set[str] = set()
    for arg in importer.arguments:
        flag = getattr(arg, "flag", None)
        if not isinstance(flag, str) or not _FLAG.match(flag) or flag in RESERVED:
            raise ValueError(
                f"importer {name!r}: option {flag!r:.60} is not '--word' or is one every "
                f"importer has ({', '.join(RESERVED)})"
            )
        if flag in seen or getattr(arg, "kind", None) not in ("value", "flag"):
            raise ValueError(f"importer {name!r}: option {flag} is given twice or has no kind")
        seen.add(flag)
    return importer


def register_importer(importer: Importer) -> Importer:
    """Add (or replace) an importer; it appears in the command line built afterwards, the
    folder scan and the Open data page.

    Raises:
        ValueError: an importer the command line cannot take (module docstring).
    """
    _check(importer)
    _discover()
    _REGISTRY[importer.name] = importer
    return importer


def _builtin(importer: Importer) -> bool:
    return str(getattr(importer.run, "__module__", "")).startswith(__package__ + ".")


def run_importer(
    importer: Importer, root: str | Path, out: str | Path, values: Mapping[str, Any]
) -> Any:
    """``importer.run(root, out, **importer.options(values))``.

    Raises:
        InputError: the importer's (or, for a registered one, any failure of its code as one
            line naming the importer, file and line).
    """
    try:
        return importer.run(root, out, **importer.options(values))
    except InputError:
        raise
    except USER_FAILURES as exc:
        if _builtin(importer):
            raise
        file, line = failure_site(exc, getattr(getattr(importer.run, "__code__", None),
                                               "co_filename", None))  # fmt: skip
        raise InputError(
            file or str(root), line, f"importer {importer.name}: {one_line(exc)}"
        ) from None


def _score(importer: Importer, folder: Path) -> float:
    """``importer.detect(folder)``; 0 when it raises or gives no number in [0, 1]."""
    try:
        score = float(importer.detect(folder))
    except USER_FAILURES:
        if _builtin(importer):
            raise
        return 0.0
    return score if math.isfinite(score) and 0.0 <= score <= 1.0 else 0.0


def unregister_importer(name: str) -> None:
    """Remove an importer (nothing when there is none of that name)."""
    _discover()
    _REGISTRY.pop(name, None)


def importers() -> dict[str, Importer]:
    """Every importer by name, in registration order."""
    _discover()
    return dict(_REGISTRY)


def get(name: str) -> Importer:
    """The importer called ``name``.

    Raises:
        KeyError: no such importer (the message lists the known ones).
    """
    found = importers()
    if name not in found:
        raise KeyError(f"unknown importer {name!r} (known: {', '.join(found)})")
    return found[name]


def suggest(folder: str | Path) -> Importer | None:
    """The importer whose layout ``folder`` matches best (``None``: none matches)."""
    root = Path(folder)
    best, best_score = None, 0.0
    for importer in importers().values():
        score = _score(importer, root)
        if score > best_score:
            best, best_score = importer, score
    return best


def file_names(folder: Path) -> set[str]:
    """The names of the files directly in ``folder`` (what most detectors look at)."""
    return {p.name for p in folder.iterdir() if p.is_file()}
