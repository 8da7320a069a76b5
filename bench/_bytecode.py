"""Child processes of the benchmarks run as an installed copy does: with compiled bytecode.

``pip install`` compiles every module to bytecode, and a source checkout writes
``__pycache__`` on its first import; a shell that sets ``PYTHONDONTWRITEBYTECODE`` (some
sandboxes and CI images do) would instead make every child recompile this project's modules
from source at each start (about 0.05 s for the command line, 0.15 s for the app's home page).
The benchmarks therefore let children write bytecode to a folder of their own, outside the
source tree (``PYTHONPYCACHEPREFIX``), and warm it before timing.
"""

from __future__ import annotations

import compileall
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def user_bytecode(workdir: Path, roots: tuple[Path, ...] = (ROOT,)) -> Path:
    """Let this process's children write and read bytecode under ``workdir/pycache``, compiled
    once here for ``analysis``, ``ui``, ``app.py`` and ``pages`` of each checkout in ``roots``;
    returns that folder."""
    prefix = Path(workdir) / "pycache"
    prefix.mkdir(parents=True, exist_ok=True)
    os.environ["PYTHONDONTWRITEBYTECODE"] = ""  # empty: Python writes bytecode
    os.environ["PYTHONPYCACHEPREFIX"] = str(prefix)
    sys.pycache_prefix = str(prefix)  # what compileall writes below
    for root in roots:
        for target in ("analysis", "ui", "pages"):
            if (root / target).is_dir():
                compileall.compile_dir(root / target, quiet=1)
        if (root / "app.py").is_file():
            compileall.compile_file(root / "app.py", quiet=1)
    return prefix
