"""Is there a font for Chinese, Japanese and Korean text? Image exports (kaleido drives
Chromium) and the slides draw text with the fonts fontconfig knows; without a CJK font every
Chinese character is an empty box.

:func:`cjk_font_available` asks fontconfig (``fc-list :lang=zh family``, as Chromium would
find one); without ``fc-list`` it looks for font files whose names mark them as CJK fonts
(Noto Sans/Serif CJK, Source Han, WenQuanYi, Droid Sans Fallback, ...) in the usual font
folders. The answer is computed once per process. :func:`needs_cjk_warning` is the check the
app and the exporters make: CJK text present and no CJK font. On Debian/Ubuntu:
``apt-get install fonts-noto-cjk``. The module never imports streamlit.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from analysis.present.paper import has_cjk

__all__ = ["FONT_FOLDERS", "cjk_font_available", "needs_cjk_warning", "texts_have_cjk"]

#: Folders searched for font files when ``fc-list`` is not installed.
FONT_FOLDERS: tuple[str, ...] = (
    "/usr/share/fonts",
    "/usr/local/share/fonts",
    "~/.local/share/fonts",
    "~/.fonts",
    "/Library/Fonts",
    "/System/Library/Fonts",
    "C:/Windows/Fonts",
)
_CJK_FILE = re.compile(
    r"(cjk|sourcehan|source-han|wqy|wenquanyi|droidsansfallback|notosanssc|notosanstc|"
    r"pingfang|msyh|simsun|simhei|yahei|hiragino|ukai|uming|arphic|nanum|ipag|takao)",
    re.IGNORECASE,
)


def _fc_list() -> bool | None:
    """True/False from fontconfig, ``None`` when ``fc-list`` cannot answer."""
    exe = shutil.which("fc-list")
    if exe is None:
        return None
    try:
        done = subprocess.run(  # a fixed command, no shell
            [exe, ":lang=zh", "family"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return bool(done.stdout.strip())


def _font_files() -> bool:
    for folder in FONT_FOLDERS:
        root = Path(folder).expanduser()
        if not root.is_dir():
            continue
        for path in root.rglob("*"):
            if path.suffix.lower() in (".ttf", ".otf", ".ttc", ".otc") and _CJK_FILE.search(
                path.name
            ):
                return True
    return False


@functools.cache
def cjk_font_available() -> bool:
    """True when a font for Chinese text is installed (module docstring); checked once.
    ``RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT=1`` answers False (to see the warning)."""
    if os.environ.get("RETRIEVAL_DASHBOARD_ASSUME_NO_CJK_FONT", "") not in ("", "0"):
        return False
    found = _fc_list()
    return _font_files() if found is None else found


def texts_have_cjk(texts: Iterable[object]) -> bool:
    """True when any of ``texts`` holds a Chinese, Japanese or Korean character."""
    return any(has_cjk(t) for t in texts if t is not None)


def needs_cjk_warning(texts: Iterable[object]) -> bool:
    """True when ``texts`` hold CJK text and no CJK font is installed (the text would be drawn
    as boxes). The font is checked first, so on a machine with one the texts are not read."""
    return not cjk_font_available() and texts_have_cjk(texts)
