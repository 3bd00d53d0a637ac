"""Writing so that a reader never sees a half-written file or folder: a uniquely named hidden
sibling, then a rename. Unique names because several processes (the runner's workers) may write
the same file at once; created with open/mkdir, so the user's umask applies (tempfile's mkstemp
and mkdtemp make everything private, 0600 and 0700)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def _unique(parent: Path, prefix: str, suffix: str = "") -> Path:
    return parent / f"{prefix}{os.getpid()}-{secrets.token_hex(6)}{suffix}"


def write_atomic(path: Path, text: str) -> None:
    tmp = _unique(path.parent, f".{path.name}.", ".tmp")
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
