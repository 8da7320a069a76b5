"""Process-start tuning of the command line's memory allocation (glibc only).

:func:`tune` runs when the command line starts its own process — the console script
(:func:`analysis.cli.console`) and ``python -m analysis`` — before numpy and pyarrow load. It is
never run by :func:`analysis.cli.main` or by importing :mod:`analysis.cli`, so a notebook or a
test that calls ``main()`` keeps its own allocator. Unless the environment already configures
malloc (:data:`USER_SETTING`), it keeps one heap that every step of a command reuses:

* Arrow allocates from the C library (:data:`ARROW_POOL`, read when pyarrow first allocates)
  instead of its own mimalloc, so the CSV reader's freed buffers serve numpy's arrays and the
  other way round;
* one malloc arena for every thread (:data:`M_ARENA_MAX` = :data:`ARENAS`): the reader's and the
  core's worker threads free and reuse the same heap, not one arena each;
* large blocks come from that heap and stay there once freed (:data:`M_MMAP_MAX` =
  :data:`MMAP_MAX`, :data:`M_TRIM_THRESHOLD` = :data:`TRIM_THRESHOLD`): glibc otherwise unmaps
  each freed block of 32 MiB or more, and each new array faults its pages in again;
* numpy does not ask for transparent huge pages (:data:`NUMPY_HUGEPAGE`): on a virtual machine
  a fresh 2 MiB page costs more than its 512 small pages, and reused heap pages need no new
  fault.

Allocation only: no number depends on it. Measurements are in ``bench/README.md``.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import MutableMapping

#: A malloc setting of the user's in the environment: when present, nothing is changed.
USER_SETTING = "MALLOC_MMAP_MAX_"
#: Arrow's default memory pool: the C library's allocator.
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")
#: numpy's transparent-huge-page hint: off.
NUMPY_HUGEPAGE = ("NUMPY_MADVISE_HUGEPAGE", "0")

#: ``mallopt`` parameters (glibc's ``malloc.h``) and the values set.
M_ARENA_MAX = -8
M_MMAP_MAX = -4
M_TRIM_THRESHOLD = -1
ARENAS = 1
MMAP_MAX = 0
TRIM_THRESHOLD = 1 << 30


def glibc() -> bool:
    """The process runs on glibc (whose malloc these settings tune)."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def wanted(environ: MutableMapping[str, str] | None = None) -> bool:
    """The tuning applies: glibc, and no malloc setting of the user's in the environment."""
    environ = os.environ if environ is None else environ
    return glibc() and USER_SETTING not in environ


def tune(environ: MutableMapping[str, str] | None = None) -> bool:
    """Apply the settings above to this process (call before numpy and pyarrow load); returns
    whether they were applied. Values the environment already sets are kept."""
    environ = os.environ if environ is None else environ
    if not wanted(environ):
        return False
    for name, value in (ARROW_POOL, NUMPY_HUGEPAGE):
        environ.setdefault(name, value)
    try:
        mallopt = ctypes.CDLL(None).mallopt  # this process's own C library
    except (OSError, AttributeError):
        return True
    mallopt(M_ARENA_MAX, ARENAS)
    mallopt(M_MMAP_MAX, MMAP_MAX)
    mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    return True
