"""Zips from strangers (worlds, the xlsx/docx inside them, inspect .eval logs), checked first.

A zip is refused by the names and sizes its entries declare, before any entry is decompressed
(files on disk are capped by `errors.read_bytes`). Python's zip reader never returns more than an
entry declares (a lying entry fails its CRC check), so the declared sizes bound memory.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from rubric_audit.errors import MAX_FILE_BYTES, InputError, too_big

MAX_ARCHIVE_BYTES = 2**30
"""The declared total of one zip's entries."""
MAX_RATIO = 200
"""Declared size over compressed size, for entries above RATIO_FLOOR (10 MB): zeros compress
~1000:1, real documents, sheets and logs of that size far less."""
RATIO_FLOOR = 10 * 2**20


def safe_member_name(name: str) -> str | None:
    """The entry's path with `.` parts and repeated slashes removed, or None when it could leave
    the folder it is extracted into (absolute, `..`, a drive, a backslash, a control character)."""
    if (not name or name.startswith("/") or "\\" in name or not name.isprintable()
            or ".." in PurePosixPath(name).parts or ":" in PurePosixPath(name).parts[0]):
        return None
    return PurePosixPath(name).as_posix()


def checked_entries(zf: zipfile.ZipFile, archive: str | Path) -> list[zipfile.ZipInfo]:
    """The file entries of an open zip, every one checked by name and declared size first."""
    entries = [i for i in zf.infolist() if not i.is_dir()]
    total = 0
    for info in entries:
        if safe_member_name(info.filename) is None:
            raise InputError(archive, info.filename, "zip entry would be written outside the "
                                                     "folder it belongs in")
        if info.file_size > MAX_FILE_BYTES:
            raise InputError(archive, info.filename,
                             f"zip entry too large: {too_big(info.file_size, MAX_FILE_BYTES)}")
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise InputError(archive, info.filename,
                             f"zip entry expands {info.file_size // max(info.compress_size, 1):,}"
                             f" times (a zip bomb?); the limit is {MAX_RATIO}")
        total += info.file_size
    if total > MAX_ARCHIVE_BYTES:
        raise InputError(archive, None, f"zip too large when extracted: "
                                        f"{too_big(total, MAX_ARCHIVE_BYTES)}")
    return entries


ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError,
              RuntimeError, EOFError, OSError, ValueError, KeyError)
"""What reading a damaged zip raises: CRC errors, truncation, encryption, unknown methods."""


def read_zip(archive: Path) -> dict[str, bytes]:
    """Every file entry of a zip by its normalised name, checked before any is decompressed."""
    try:
        with zipfile.ZipFile(archive) as zf:
            entries = checked_entries(zf, archive)
            return {safe_member_name(i.filename) or "": zf.read(i) for i in entries}
    except ZIP_ERRORS as exc:
        raise InputError(archive, None, f"unreadable zip: {exc}") from None


def check_zip(source: bytes | Path, name: str | Path) -> None:
    """Refuse a zip (in memory, as an xlsx or docx, or a file such as an inspect_ai .eval log)
    whose entries declare too much, before a library decompresses them."""
    try:
        with zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source) as zf:
            checked_entries(zf, name)
    except ZIP_ERRORS as exc:
        raise InputError(name, None, f"unreadable zip: {exc}") from None
