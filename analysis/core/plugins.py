"""Plugins: Python modules of :func:`analysis.register_measure` calls, loaded by name or path.

``python -m analysis <command> --plugin MODULE`` (any command, repeatable) and the app's
environment variable ``RETRIEVAL_DASHBOARD_PLUGINS`` (comma-separated) load them. ``MODULE`` is
an importable module name (``mylab.measures``) or the path of a ``.py`` file. A module is loaded
once per process (a path is keyed by its resolved location); loading it runs its top level,
which registers its measures.

A plugin that cannot be loaded (not found, a syntax error, an exception or ``sys.exit()`` at
its top level, a ``register_measure`` call it makes that is refused) is one
:class:`~analysis.core.errors.InputError` naming the plugin, the file and line of the failure in
the plugin (not in the library it called) and what went wrong. What a plugin prints while it
loads goes to stderr (:func:`analysis.core.measures.user_output`).
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
from analysis.core.measures import (
    REGISTRY,
    USER_FAILURES,
    failure_site,
    one_line,
    user_output,
)

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


def _origin(spec: str) -> str | None:
    """The file of the plugin ``spec`` (where its own frames are), if it can be found."""
    if _is_path(spec):
        return _key(spec)
    try:
        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError):
        return None
    return found.origin if found is not None else None


_MODULE = re.compile(r"^[^\W\d]\w*(\.[^\W\d]\w*)*$")


def _checked(spec: object) -> str:
    """``spec`` stripped when it can name a plugin: a dotted module name or a path.

    Raises:
        InputError: empty, a NUL character, or neither a module name nor a path.
    """
    text = str(spec).strip()
    shown = text if len(text) <= 80 else text[:79] + "…"
    if "\0" in text:
        raise InputError(shown.replace("\0", "\\0"), None, "plugin: a NUL character")
    if not text or not (_is_path(text) or (_MODULE.match(text) and len(text) <= 200)):
        raise InputError(
            shown or "''", None, "plugin: not a module name (mylab.measures) or a .py path"
        )
    return text


def load_plugin(spec: str) -> ModuleType:
    """Import the plugin ``spec`` (a module name or a ``.py`` path) once per process.

    Raises:
        InputError: the plugin cannot be found or its top level fails (file and line of the
            failure, the exception in one line).
    """
    spec = _checked(spec)
    key = _key(spec)
    if key in _LOADED:
        return _LOADED[key]
    try:
        with user_output():
            module = _from_path(spec) if _is_path(spec) else importlib.import_module(spec)
    except InputError:
        raise
    except USER_FAILURES as exc:  # the user's code or a missing module: one line
        if isinstance(exc, ModuleNotFoundError) and exc.name and spec.startswith(exc.name):
            raise InputError(spec, None, f"plugin: no module named {exc.name!r}") from None
        file, line = failure_site(exc, _origin(spec))
        raise InputError(file or spec, line, f"plugin {spec}: {one_line(exc)}") from None
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


def measure_sources() -> tuple[list[str], list[str]]:
    """Where the registered user measures come from, for another process (the app a notebook
    starts) to know them too: ``(files, local)``, the ``.py`` files that declare them (to load
    as plugins there) and the names of the measures declared where no other process can load
    them (a notebook cell, the ``__main__`` script, a file whose path holds a comma, which
    :data:`ENV` cannot carry)."""
    files: list[str] = []
    local: list[str] = []
    for measure in REGISTRY.values():
        if not measure.user:
            continue
        fn = getattr(measure.kernel, "__wrapped__", None)
        name = getattr(fn, "__module__", None) or "__main__"
        file = getattr(sys.modules.get(name), "__file__", None)
        if name == "__main__" or not file or not str(file).endswith(".py") or "," in str(file):
            local.append(measure.name)
        elif file not in files:
            files.append(str(file))
    return files, local
