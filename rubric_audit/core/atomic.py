"""Writing so that a reader never sees a half-written file or folder: a uniquely named hidden
sibling, then a rename. Unique names because several processes (the runner's workers) may write
the same file at once; created with open/mkdir, so the user's umask applies (tempfile's mkstemp
and mkdtemp make everything private, 0600 and 0700). A new output folder is built in a hidden
sibling named with the process's id (`staged`), so the next run removes what a killed one left
(`remove_stale_staging`)."""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rubric_audit.core.errors import InputError


def _unique(parent: Path, prefix: str, suffix: str = "") -> Path:
    return parent / f"{prefix}{os.getpid()}-{secrets.token_hex(6)}{suffix}"


def temporary_sibling(path: Path) -> Path:
    """A unique hidden name beside `path`, for a file written there and renamed into place."""
    return _unique(path.parent, f".{path.name}.", ".tmp")


def write_atomic(path: Path, text: str) -> None:
    tmp = temporary_sibling(path)
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def staging_folder(parent: Path, prefix: str) -> Path:
    """A new empty folder named `prefix` plus a unique tail, inside `parent`."""
    while True:
        path = _unique(parent, prefix)
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue


@contextmanager
def staged(out: Path, raced: str) -> Iterator[Path]:
    """A new folder `out`, built in a hidden sibling (`.OUT.<pid>.*`) renamed into place when
    the block ends without an exception, and removed when it does not. `raced` says why it
    could not be renamed where another process made `out` first."""
    staging = staging_folder(out.parent, f".{out.name}.{os.getpid()}.")
    try:
        yield staging
        try:
            staging.rename(out)
        except OSError:
            if not out.exists():
                raise
            raise InputError(out, None, raced) from None
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def write_folder(folder: Path, files: dict[str, str]) -> list[Path]:
    """`folder` holding exactly `files` (name -> text), written whole: built in a hidden sibling
    and swapped in for the folder it replaces, which is then removed. Returns the paths."""
    with replacing(folder) as new:
        for name, text in files.items():
            (new / name).write_text(text, encoding="utf-8")
    return [folder / name for name in files]


@contextmanager
def replacing(folder: Path) -> Iterator[Path]:
    """A folder to build whole in place of `folder`: a hidden sibling (`.NAME.<pid>.*`, so
    `remove_stale_staging` knows a killed run's) that takes `folder`'s place when the block ends
    without an exception, and is removed when it does not."""
    new = staging_folder(folder.parent, f".{folder.name}.{os.getpid()}.")
    try:
        yield new
        replace_folder(new, folder)
    finally:
        if new.exists():
            shutil.rmtree(new)


def replace_folder(new: Path, folder: Path) -> None:
    """`new` renamed into `folder`'s place: the folder it replaces is moved aside first, then
    removed (or put back if `new` could not take its place)."""
    old = None
    try:
        if folder.exists():
            old = staging_folder(folder.parent, f".{folder.name}.{os.getpid()}.old.")
            old.rmdir()
            folder.rename(old)
        new.rename(folder)
    finally:
        if old is not None and old.exists():
            if folder.exists():
                shutil.rmtree(old)
            else:  # the new one did not take its place: the old one goes back
                old.rename(folder)


def remove_stale_staging(out: Path) -> None:
    """Remove `.OUT.<pid>.*` staging folders whose process is gone (killed mid-run)."""
    prefix = f".{out.name}."
    for folder in out.parent.glob(f"{glob.escape(prefix)}*"):
        pid = folder.name[len(prefix):].partition(".")[0]
        if folder.is_dir() and not folder.is_symlink() and pid.isdecimal() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def make_writable_folder(folder: Path) -> None:
    """Create `folder` (with its parents) or say in one line why it cannot be written to."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(folder, None, f"cannot create the folder: {exc.strerror or exc}") from None
    check_writable(folder)


def check_writable(path: Path) -> None:
    """Refuse, before any work, a folder or file this process cannot write. Tried, not asked of
    os.access: root passes every permission check, yet an immutable folder or a read-only mount
    refuses root's writes (which then failed at the first report, after the audit's work)."""
    if not path.exists():
        return
    try:
        if path.is_dir():
            tempfile.TemporaryFile(dir=path).close()
        else:
            with path.open("ab"):
                pass
    except OSError:
        raise InputError(path, None, "not writable: choose another output folder or fix its "
                                     "permissions") from None


def check_file_target(path: Path, option: str, example: str) -> None:
    """Refuse, before any work, where a file option cannot be written: a folder (`example` is a
    file name to suggest in it), a folder that does not exist, or one this process cannot write."""
    if path.is_dir():
        raise InputError(path, option, f"a folder, not a file: name the file to write, e.g. "
                                       f"{path / example}")
    if not path.parent.is_dir():
        raise InputError(path, option, f"no folder {path.parent} to write it in")
    check_writable(path.parent)
    check_writable(path)
