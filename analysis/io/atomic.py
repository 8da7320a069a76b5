"""Writing outputs safely: one writer for every output file and folder of the project.

* :func:`check_target` refuses, before anything is written, a target that is a folder, a device
  (``/dev/full``, ``/dev/null``, a terminal), a pipe (FIFO) or a socket, a target whose folder
  is missing or not a folder, and a path that cannot be examined (a symlink loop, permission,
  a name too long): one line naming the path. Outputs are regular files: to print a table,
  write it to a file and read that.
* :func:`atomic_write` writes to a temporary file beside the target (same folder, so the same
  file system), checks the write (a full disk, a file size limit or an I/O error fails the
  command instead of being lost), forces the data to disk (``fsync``), renames it over the
  target (``os.replace``, atomic on POSIX and Windows) and syncs the folder. A process killed
  mid-write (even ``kill -9``) leaves the previous content or no file, never a partial one; a
  failed write leaves the previous content too; two processes writing the same target leave one
  complete file (the last rename wins). A killed writer may leave its hidden
  ``.<name>.*.tmp`` file behind.
* :func:`atomic_write_all` does it for several files at once: all written and synced before
  any is renamed, so a failing write leaves none of them (a command's outputs come together).
* :func:`atomic_folder` does the same for a folder (a bundle): built beside, synced, swapped in.
* :func:`refuse_overwrite` refuses a target that is one of the command's input files (the same
  file after symlinks, or a hard link of it: compared by device and inode).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from analysis.core import paths
from analysis.core.errors import InputError

__all__ = [
    "atomic_folder",
    "atomic_write",
    "atomic_write_all",
    "atomic_write_text",
    "check_target",
    "refuse_overwrite",
]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _folder_of(target: Path) -> Path:
    return target.parent if str(target.parent) else Path()


def check_target(out: str | Path, *, folder: bool = False) -> Path:
    """The output path as a :class:`Path` when a file (``folder=True``: a folder) may be
    written there; see the module notes.

    Raises:
        InputError: the target is a device, pipe, socket or (for a file) a folder, or (for a
            folder) a file; its folder does not exist or is not a folder; the path cannot be
            examined.
    """
    target = Path(out)
    if not target.name:
        raise InputError(target, None, "is a folder, not a file name")
    info = paths.stat(target, missing_ok=True)
    if info is not None:
        kind = paths.kind_of(info.st_mode)
        wanted = "folder" if folder else "file"
        if kind != wanted:
            what = "is a folder, not a file" if kind == "folder" else f"is a {kind}, not a {wanted}"
            if kind not in ("file", "folder"):
                what += f": outputs are written to regular {wanted}s"
            raise InputError(target, None, what)
        return target
    parent = paths.stat(_folder_of(target), missing_ok=True)
    if parent is None:
        raise InputError(
            target, None, f"cannot write: the folder {_folder_of(target)} does not exist"
        )
    if not stat.S_ISDIR(parent.st_mode):
        raise InputError(target, None, f"cannot write: {_folder_of(target)} is not a folder")
    return target


#: bytes of the target's name a temporary name beside it starts with: ``.<name>.<8 random>.tmp``
#: (or ``.old.``) must stay within the 255 bytes a name may have on common file systems
PREFIX_BYTES = 200


def _prefix(target: Path, tag: str = "") -> str:
    """``.<name>.<tag>`` for a temporary file or folder beside ``target``, the name cut to
    :data:`PREFIX_BYTES` bytes (a whole character at most), so that a target whose own name
    fits the file system never fails as "too long" for its temporary's."""
    name = os.fsencode(target.name)[:PREFIX_BYTES]
    return f".{name.decode('utf-8', 'ignore') or 'out'}.{tag}"


def _fsync_path(path: Path, *, directory: bool = False) -> None:
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    except OSError:
        if not directory:  # some file systems cannot sync a folder; a file must sync
            raise
    finally:
        os.close(fd)


def _cannot_write(target: Path, exc: BaseException) -> InputError:
    return paths.path_error(target, exc, "cannot write")


def atomic_write(out: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``out``, then make it ``out`` (see the
    module notes: checked, synced, renamed).

    The new file gets the usual permissions (``0o666`` minus the umask). A symlink at ``out`` is
    replaced by the file (the file it pointed to is left alone).

    Raises:
        InputError: :func:`check_target` refuses ``out``; the folder cannot be written; the
            write, the sync or the rename failed (full disk, I/O error, ...): the message names
            ``out`` and no file is left at ``out`` but the previous one. Whatever else
            ``write`` raises is passed on after the temporary file is removed.
    """
    _install(*_write_beside(out, write))


def atomic_write_all(outputs: Sequence[tuple[str | Path, Callable[[Path], None]]]) -> None:
    """:func:`atomic_write` of several files as one step: every ``write(tmp)`` is done (checked
    and synced) beside its target before any target is renamed into place, so a write that
    fails (a full disk, a file size limit, an error of ``write``) leaves every target as it
    was, and no temporary file. Only a failing rename (rare once the files are written) can
    leave the targets renamed before it.

    Raises:
        InputError: as :func:`atomic_write`, for the first output that fails.
    """
    written: list[tuple[Path, Path]] = []
    try:
        for out, write in outputs:
            written.append(_write_beside(out, write))
        while written:
            _install(*written.pop(0))
    finally:
        for _, tmp in written:
            with contextlib.suppress(OSError):
                tmp.unlink()


def _write_beside(out: str | Path, write: Callable[[Path], None]) -> tuple[Path, Path]:
    """``(target, tmp)``: ``write(tmp)`` done on a new temporary file beside the checked
    target, given the usual permissions and synced; on any failure the file is removed (an
    OSError becomes the InputError naming ``out``)."""
    target = check_target(out)
    try:
        fd, name = tempfile.mkstemp(dir=_folder_of(target), prefix=_prefix(target), suffix=".tmp")
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        if not tmp.is_file():  # the writer replaced or removed its own file
            raise InputError(target, None, "cannot write: the temporary file disappeared")
        tmp.chmod(0o666 & ~_umask())
        _fsync_path(tmp)  # the data is on disk (or the disk's error is seen) before the rename
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _cannot_write(target, exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return target, tmp


def _install(target: Path, tmp: Path) -> None:
    """Rename the written ``tmp`` over ``target`` and sync the folder (the rename reaches the
    disk); a failed rename removes ``tmp`` and is the InputError naming ``target``."""
    try:
        tmp.replace(target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _cannot_write(target, exc) from None
    with contextlib.suppress(OSError):
        _fsync_path(_folder_of(target), directory=True)


def atomic_write_text(out: str | Path, text: str) -> None:
    """:func:`atomic_write` of UTF-8 text."""

    atomic_write(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _sync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            _fsync_path(path)
    _fsync_path(folder, directory=True)


def atomic_folder(out: str | Path, build: Callable[[Path], None]) -> Path:
    """Call ``build(tmp)`` on a new temporary folder beside ``out``, sync every file written,
    then put it at ``out``: an existing folder there is moved aside and removed only once the
    new one is in place. Returns ``out`` as a Path.

    The caller decides whether an existing ``out`` may be replaced (e.g. only a bundle).

    Raises:
        InputError: ``out`` is a file, device or pipe; the folder beside cannot be written; a
            write or sync failed (full disk, I/O error). Nothing is left at ``out`` but the
            previous folder, and the temporary folder is removed.
    """
    target = check_target(out, folder=True)
    parent = _folder_of(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=_prefix(target), dir=parent))
    except OSError as exc:
        raise _cannot_write(target, exc) from None
    try:
        build(tmp)
        tmp.chmod(0o777 & ~_umask())
        _sync_tree(tmp)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=_prefix(target, "old."), dir=parent))
            old.rmdir()
            target.rename(old)
            try:
                tmp.rename(target)
            except OSError:  # put the previous folder back
                with contextlib.suppress(OSError):
                    old.rename(target)
                raise
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(target)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise _cannot_write(target, exc) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    with contextlib.suppress(OSError):
        _fsync_path(parent, directory=True)
    return target


def refuse_overwrite(
    out: str | Path,
    inputs: Iterable[str | Path],
    *,
    what: str = "an input file",
    folders: Iterable[str | Path] = (),
) -> None:
    """Raise InputError when ``out`` is one of ``inputs``: the same file after symlinks or a
    hard link of it (same device and inode). A target that does not exist yet is no input;
    either way a target directly in one of ``folders``, folders every file of which is read as
    input (a bundle's runs folder), is refused too: ``<out>: lies in <folder>, whose files are
    read as input``.

    ``what`` names the kind of file in the message: ``<out>: is <what>: refusing to overwrite
    it``. One ``stat`` per input, no path resolution: linear in the number of inputs.

    The target is checked first (:func:`check_target`), so a command that calls this before
    its work refuses a device, pipe or missing folder before computing anything."""
    target = check_target(out)
    info = paths.stat(target, missing_ok=True)
    if info is not None:
        mine = (info.st_dev, info.st_ino)
        for given in inputs:
            try:
                other = Path(given).stat()
            except (OSError, ValueError):
                continue  # an input that cannot be examined is reported by its reader
            if (other.st_dev, other.st_ino) == mine:
                raise InputError(target, None, f"is {what}: refusing to overwrite it")
    _refuse_in_folders(target, folders)


def _refuse_in_folders(target: Path, folders: Iterable[str | Path]) -> None:
    """InputError when ``target``'s folder is one of ``folders`` (same device and inode)."""
    folders = list(folders)
    if not folders:
        return
    here = paths.stat(_folder_of(target), missing_ok=True)
    if here is None:
        return
    for folder in folders:
        try:
            other = Path(folder).stat()
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == (here.st_dev, here.st_ino):
            raise InputError(
                target,
                None,
                f"lies in {folder}, whose files are read as input: refusing to write there",
            )
