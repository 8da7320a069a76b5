"""Plugins: Python modules of :func:`analysis.register_measure` calls, loaded by name or path.

``python -m analysis <command> --plugin MODULE`` (any command, repeatable) and the app's
environment variable ``RETRIEVAL_DASHBOARD_PLUGINS`` (comma-separated) load them. ``MODULE`` is
an importable module name (``mylab.measures``) or the path of a ``.py`` file. A module is loaded
once per process (a path is keyed by its resolved location); loading it runs its top level,
which registers its measures.

A plugin that cannot be loaded (not found, a syntax error, an exception at its top level) is
one :class:`~analysis.core.errors.InputError` naming the plugin, the file and line of the
failure and what went wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import stat
import sys
from collections.abc import Iterable, Mapping
from types import ModuleType

from analysis.core import paths
from analysis.core.errors import InputError
from analysis.core.measures import failure_site

#: The environment variable the app reads its plugins from (comma-separated).
ENV = "RETRIEVAL_DASHBOARD_PLUGINS"

_LOADED: dict[str, ModuleType] = {}


def _is_path(spec: str) -> bool:
    return spec.endswith(".py") or os.sep in spec or "/" in spec


def _key(spec: str) -> str:
    """A plugin's identity: its resolved path (a symlink loop or a name too long is one line
    naming it), or its module name."""
    return str(paths.resolve(spec)) if _is_path(spec) else spec


def _from_path(spec: str) -> ModuleType:
    path = paths.resolve(spec)
    info = paths.stat(path, missing_ok=True)  # a name too long, permission: one line
    if info is None or not stat.S_ISREG(info.st_mode):
        raise InputError(spec, None, "plugin: no such file")
    name = "analysis_plugin_" + re.sub(r"\W", "_", path.stem)
    found = importlib.util.spec_from_file_location(name, path)
    if found is None or found.loader is None:
        raise InputError(spec, None, "plugin: not a Python file")
    module = importlib.util.module_from_spec(found)
    sys.modules[name] = module  # so that the measures' functions name their module
    try:
        found.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_plugin(spec: str) -> ModuleType:
    """Import the plugin ``spec`` (a module name or a ``.py`` path) once per process.

    Raises:
        InputError: the plugin cannot be found or its top level fails (file and line of the
            failure, the exception in one line).
    """
    spec = str(spec).strip()
    key = _key(spec)
    if key in _LOADED:
        return _LOADED[key]
    try:
        module = _from_path(spec) if _is_path(spec) else importlib.import_module(spec)
    except InputError:
        raise
    except Exception as exc:  # the user's code or a missing module: one line
        file, line = failure_site(exc)
        lines = str(exc).strip().splitlines()
        what = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        if isinstance(exc, ModuleNotFoundError) and exc.name and spec.startswith(exc.name):
            raise InputError(spec, None, f"plugin: no module named {exc.name!r}") from None
        raise InputError(file or spec, line, f"plugin {spec}: {what}") from None
    _LOADED[key] = module
    return module


def load_plugins(specs: Iterable[str]) -> list[ModuleType]:
    """:func:`load_plugin` for each spec (empty items skipped), in order."""
    return [load_plugin(s) for s in specs if str(s).strip()]


def env_plugins(environ: Mapping[str, str] | None = None) -> list[str]:
    """The plugins named by :data:`ENV` (comma-separated; blanks dropped)."""
    raw = (os.environ if environ is None else environ).get(ENV, "")
    return [item.strip() for item in raw.split(",") if item.strip()]


def forget(spec: str) -> None:
    """Forget that ``spec`` was loaded (the next :func:`load_plugin` runs it again)."""
    spec = str(spec).strip()
    key = _key(spec)
    module = _LOADED.pop(key, None)
    if module is not None:
        sys.modules.pop(module.__name__, None)
