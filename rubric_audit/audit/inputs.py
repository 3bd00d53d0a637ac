"""A fingerprint of everything an offline audit reads, so an audit of unchanged inputs is reused.

Like make and git, it trusts each file's path, size and modification time instead of reading the
file: walking a benchmark with thousands of run folders costs a fraction of a second, reading it
costs the audit. rubric-audit's own code is part of the fingerprint, so a changed check is rerun.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import rubric_audit

CODE = Path(rubric_audit.__file__).resolve().parent


def _walk(root: Path, skip: Path | None, digest: hashlib.blake2b) -> None:
    """Feed every file under `root` with its size and mtime to `digest`, and every folder by name
    (links are not walked into, but a link's target is stat'ed)."""
    pending = [root]
    while pending:
        folder = pending.pop()
        if skip is not None and folder == skip:
            continue
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:  # a file, or unreadable: the loaders say so, with the file's name
            entries = []
        for entry in entries:
            if entry.name == "__pycache__":  # written by Python itself, not an input
                continue
            if entry.is_dir(follow_symlinks=False):  # its entries are walked: no mtime needed
                digest.update(os.fsencode(entry.path) + b"/\n")
                pending.append(Path(entry.path))
                continue
            info = entry.stat(follow_symlinks=False)
            digest.update(os.fsencode(entry.path) + f"\0{info.st_mode}\0{info.st_size}\0"
                                                   f"{info.st_mtime_ns}\n".encode())
            if entry.is_symlink():  # a loader that follows it reads its target: stat that too
                try:
                    target = os.stat(entry.path)
                except OSError:
                    continue
                digest.update(f"->{target.st_size}\0{target.st_mtime_ns}\n".encode())


def inputs_fingerprint(paths: list[Path], settings: dict[str, object], out: Path) -> str:
    """Hash of the settings, rubric-audit's code and every file under `paths` (except `out`)."""
    digest = hashlib.blake2b(json.dumps(settings, sort_keys=True, default=str).encode(),
                             digest_size=16)
    skip = out.resolve()
    roots = sorted({Path(p).resolve() for p in [CODE, *paths]})
    for path in roots:
        if any(path != other and path.is_relative_to(other) for other in roots):
            continue  # walked with the folder holding it (BENCH/runs inside BENCH)
        if path.is_dir():
            digest.update(os.fsencode(path) + b"/\n")
            _walk(path, skip, digest)
        elif path.exists():  # a file given itself (an inspect log); a missing one is the loaders'
            info = path.stat()
            digest.update(os.fsencode(path) + f"\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return digest.hexdigest()
