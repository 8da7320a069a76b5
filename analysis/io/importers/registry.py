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
earlier-registered importer on a tie.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

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


def register_importer(importer: Importer) -> Importer:
    """Add (or replace) an importer; it appears in the command line built afterwards, the
    folder scan and the Open data page."""
    _discover()
    _REGISTRY[importer.name] = importer
    return importer


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
        score = float(importer.detect(root))
        if score > best_score:
            best, best_score = importer, score
    return best


def file_names(folder: Path) -> set[str]:
    """The names of the files directly in ``folder`` (what most detectors look at)."""
    return {p.name for p in folder.iterdir() if p.is_file()}
