"""Fingerprints of what an offline audit reads, so that unchanged inputs are not read again.

Like make and git, they trust each file's path, size and modification time instead of reading
the file: walking a benchmark with thousands of run folders costs a fraction of a second, reading
it costs the audit. A folder's digest covers its files and, by their digests, its subfolders (a
Merkle tree), so one walk gives the whole input's fingerprint and each run folder's own: an audit
of unchanged inputs is reused, and one with a variant added reads only that variant.
rubric-audit's own code is part of the fingerprint, so a changed check is rerun.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import rubric_audit

CODE = Path(rubric_audit.__file__).resolve().parent
KEPT_DEPTH = 2
"""Folders this deep under a walked root keep their digest (a runs folder's variant folders)."""
INPUTS_META = "inputs"
"""Fingerprint of the last complete offline audit's inputs (in the store's meta); any import
clears it."""
_STAT = struct.Struct("<QqQ")


def _digest(parts: list[bytes]) -> bytes:
    return hashlib.blake2b(b"\n".join(parts), digest_size=16).digest()


def _name(entry: os.DirEntry[str]) -> str:
    return entry.name


@dataclass
class _Frame:
    """A folder being walked: its entries' parts in name order; `folders` are (slot, path,
    name) of its subfolders still to walk, whose parts are filled in when they are done."""

    path: str
    depth: int
    parts: list[bytes]
    folders: list[tuple[int, str, bytes]] = field(default_factory=list)


class TreeDigests:
    """Digests of files and folders by their files' names, modes, sizes and modification times
    (links are not walked into, but a link's target is stat'ed; `__pycache__` is written by
    Python itself and `skip`, the audit's output folder, by the audit: neither is an input).
    Each folder is walked once; folders up to KEPT_DEPTH under a walked one keep their digest."""

    def __init__(self, skip: Path | None = None) -> None:
        self._skip = str(skip) if skip is not None else None
        self._kept: dict[str, bytes] = {}

    def digest(self, path: Path) -> bytes:
        """The digest of a file or folder (an unreadable or missing one: of nothing)."""
        key = os.path.realpath(path)  # as the walk of a folder above it names it
        if key in self._kept:
            return self._kept[key]
        if os.path.isdir(key):
            return self._walk(key)
        try:
            info = os.stat(key)
        except OSError:
            return _digest([])
        return _digest([_STAT.pack(info.st_mode, info.st_size, info.st_mtime_ns)])

    def _enter(self, path: str, depth: int) -> _Frame:
        frame = _Frame(path, depth, [])
        try:
            with os.scandir(path) as listing:
                entries = sorted(listing, key=_name)
        except OSError:  # a file, or unreadable: the loaders say so, with the file's name
            return frame
        parts, skip = frame.parts, self._skip
        for entry in entries:
            name = entry.name
            if name == "__pycache__" or entry.path == skip:
                continue
            if entry.is_dir(follow_symlinks=False):
                frame.folders.append((len(parts), entry.path, os.fsencode(name)))
                parts.append(b"")
                continue
            info = entry.stat(follow_symlinks=False)
            part = os.fsencode(name) + b"\0" + _STAT.pack(info.st_mode, info.st_size,
                                                         info.st_mtime_ns)
            if entry.is_symlink():  # a loader that follows it reads its target: stat that too
                try:
                    target = os.stat(entry.path)
                    part += b"->" + _STAT.pack(target.st_mode, target.st_size,
                                               target.st_mtime_ns)
                except OSError:
                    pass
            parts.append(part)
        frame.folders.reverse()  # popped from the end: walked in name order
        return frame

    def _walk(self, root: str) -> bytes:
        """Depth first without recursion (a tree of any depth is no RecursionError)."""
        stack = [self._enter(root, 0)]
        while True:
            frame = stack[-1]
            if frame.folders:
                _, path, _ = frame.folders[-1]
                if path in self._kept:
                    self._fill(frame, self._kept[path])
                else:
                    stack.append(self._enter(path, frame.depth + 1))
                continue
            digest = _digest(frame.parts)
            if frame.depth <= KEPT_DEPTH:
                self._kept[frame.path] = digest
            stack.pop()
            if not stack:
                return digest
            self._fill(stack[-1], digest)

    @staticmethod
    def _fill(frame: _Frame, digest: bytes) -> None:
        slot, _, name = frame.folders.pop()
        frame.parts[slot] = name + b"/" + digest


def combined(parts: list[tuple[str, bytes]], settings: object = None) -> str:
    """One hex key of named digests (and settings, as JSON)."""
    digest = hashlib.blake2b(json.dumps(settings, sort_keys=True, default=str).encode(),
                             digest_size=16)
    for name, part in parts:
        digest.update(os.fsencode(name) + b"\0" + part + b"\n")
    return digest.hexdigest()


def inputs_fingerprint(paths: list[Path], settings: dict[str, object], out: Path,
                       digests: TreeDigests | None = None) -> str:
    """Hash of the settings, rubric-audit's code and every file under `paths` (except `out`);
    `digests` keeps the walk's folder digests for the caller."""
    digests = digests or TreeDigests(out.resolve())
    roots = sorted({Path(p).resolve() for p in [CODE, *paths]})
    return combined([(str(path), digests.digest(path)) for path in roots
                     if path.exists() or path.is_symlink()], settings)
