"""Zips from strangers (worlds, the xlsx/docx inside them, inspect .eval logs), checked first.

A zip is refused by the names and sizes its entries declare, and then by the size each entry
really expands to, before any library reads it (files on disk are capped by `errors.read_bytes`).
The declared sizes alone bound nothing: Python's zip reader, asked for a whole entry (as `read()`,
`json.load` and the xlsx, docx and inspect_ai readers ask), decompresses all of it at once and
only then cuts it to the declared size (a 300 KB entry that declares 1,000 bytes and expands to
300 MB takes 600 MB). Each entry is therefore decompressed here a chunk at a time from its
compressed bytes, and refused as soon as it passes its declared size; what the libraries then
read expands to no more than was declared.
"""

from __future__ import annotations

import bz2
import io
import lzma
import struct
import zipfile
import zlib
from collections.abc import Collection, Iterator
from functools import partial
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from rubric_audit.core.errors import MAX_FILE_BYTES, InputError, open_regular, too_big

MAX_ARCHIVE_BYTES = 2**30
"""The declared total of one zip's entries."""
MAX_RATIO = 200
"""Declared size over compressed size, for entries above RATIO_FLOOR (10 MB): zeros compress
~1000:1, real documents, sheets and logs of that size far less."""
RATIO_FLOOR = 10 * 2**20
CHUNK = 2**20
"""The most decompressed bytes held at once while measuring an entry."""
BLOCK = 2**16
"""Compressed bytes read at a time."""
ZIP_ZSTANDARD = 93
"""zstd's zip method (inspect_ai's .eval entries; Python's zipfile learns it from zipfile-zstd)."""

ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, lzma.LZMAError,
              NotImplementedError, RuntimeError, EOFError, OSError, ValueError, KeyError)
"""What reading a damaged zip raises: CRC errors, truncation, encryption, unknown methods."""


def safe_member_name(name: str) -> str | None:
    """The entry's path with `.` parts and repeated slashes removed, or None when it could leave
    the folder it is extracted into (absolute, `..`, a drive, a backslash, a control character)."""
    if (not name or name.startswith("/") or "\\" in name or not name.isprintable()
            or ".." in PurePosixPath(name).parts or ":" in PurePosixPath(name).parts[0]):
        return None
    return PurePosixPath(name).as_posix()


def checked_entries(zf: zipfile.ZipFile, archive: str | Path) -> list[zipfile.ZipInfo]:
    """The file entries of an open zip, every one checked by name and declared size first, then
    by the size it really expands to."""
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
    for info in entries:
        _check_expansion(zf, info, archive)
    return entries


def _check_expansion(zf: zipfile.ZipFile, info: zipfile.ZipInfo, archive: str | Path) -> None:
    """Refuse an entry as soon as it expands beyond its declared size, holding one chunk of it
    at a time (an encrypted entry, which no reader here opens, is refused as it is)."""
    if info.flag_bits & 0x1:
        raise InputError(archive, info.filename, "zip entry is encrypted")
    expanded = 0
    try:
        for piece in _expanded(zf, info):
            expanded += len(piece)
            if expanded > info.file_size:
                raise InputError(archive, info.filename, f"zip entry expands beyond its "
                                                         f"declared size ({info.file_size:,} bytes)")
    except ZIP_ERRORS as exc:
        raise InputError(archive, info.filename, f"unreadable zip entry: {exc}") from None


class _Compressed:
    """An entry's compressed bytes, read from the zip's file past the entry's local header."""

    def __init__(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
        fp: BinaryIO = zf.fp  # type: ignore[assignment]
        fp.seek(info.header_offset)
        header = fp.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
        name_length, extra_length = struct.unpack("<HH", header[26:])
        fp.seek(name_length + extra_length, io.SEEK_CUR)
        self.fp, self.left = fp, info.compress_size

    def read(self, size: int) -> bytes:
        data = self.fp.read(min(size, self.left))
        self.left -= len(data)
        return data


def _expanded(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    """An entry's decompressed bytes, at most CHUNK at a time, as its compression method gives
    them; like Python's zip reader, the end of a compressed stream ends the entry."""
    raw = _Compressed(zf, info)
    method = info.compress_type
    if method == zipfile.ZIP_STORED:
        return iter(partial(raw.read, CHUNK), b"")
    if method == zipfile.ZIP_DEFLATED:
        return _inflated(raw)
    if method == zipfile.ZIP_BZIP2:
        return _decompressed(bz2.BZ2Decompressor(), raw)
    if method == zipfile.ZIP_LZMA:
        return _decompressed(_lzma_decompressor(raw), raw)
    if method == ZIP_ZSTANDARD:
        return _unzstd(raw)
    raise NotImplementedError(f"zip compression method {method} of {info.filename!r}")


def _inflated(raw: _Compressed) -> Iterator[bytes]:
    """A raw deflate stream, each piece cut at CHUNK by zlib's output limit."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    for block in iter(partial(raw.read, BLOCK), b""):
        while block and not inflater.eof:
            yield inflater.decompress(block, CHUNK)
            block = inflater.unconsumed_tail
        if inflater.eof:
            break
    yield inflater.flush()


def _decompressed(decompressor: bz2.BZ2Decompressor | lzma.LZMADecompressor,
                  raw: _Compressed) -> Iterator[bytes]:
    """A bzip2 or LZMA stream, each piece cut at CHUNK by the decompressor's output limit."""
    for block in iter(partial(raw.read, BLOCK), b""):
        yield decompressor.decompress(block, CHUNK)
        while not decompressor.eof and not decompressor.needs_input:
            yield decompressor.decompress(b"", CHUNK)
        if decompressor.eof:
            return


def _lzma_decompressor(raw: _Compressed) -> lzma.LZMADecompressor:
    """zip's LZMA: a version, the size of the LZMA1 properties (5 bytes: lc, lp and pb in one,
    then the dictionary size), the properties, then a raw LZMA1 stream."""
    header = raw.read(4)
    properties = raw.read(int.from_bytes(header[2:4], "little"))
    if len(header) != 4 or len(properties) != 5:
        raise zipfile.BadZipFile("bad LZMA properties")
    modes, dictionary = properties[0], int.from_bytes(properties[1:], "little")
    return lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[{
        "id": lzma.FILTER_LZMA1, "lc": modes % 9, "lp": modes // 9 % 5, "pb": modes // 45,
        "dict_size": dictionary}])


def _unzstd(raw: _Compressed) -> Iterator[bytes]:
    """A zstd stream (every frame of it) through zstandard's stream reader, CHUNK at a time."""
    try:
        import zstandard
    except ImportError:  # zipfile cannot read the entry either (inspect_ai brings both)
        raise NotImplementedError("zstd-compressed zip entries need the zstandard package") \
            from None
    decompressor = zstandard.ZstdDecompressor()
    # zstandard reads any object with read(size) (its docs say so), its stub names only IO[bytes].
    reader = decompressor.stream_reader(raw, read_across_frames=True)  # type: ignore[arg-type]
    try:
        yield from iter(partial(reader.read, CHUNK), b"")
    except zstandard.ZstdError as exc:
        raise zipfile.BadZipFile(f"bad zstd data: {exc}") from None


def read_zip(archive: Path, names: Collection[str] | None = None) -> dict[str, bytes]:
    """Every file entry of a zip (or those of `names`) by its normalised name, each read only
    after every entry was checked by name, declared size and the size it really expands to."""
    try:
        with open_regular(archive) as fh, zipfile.ZipFile(fh) as zf:
            entries = checked_entries(zf, archive)
            named = {safe_member_name(i.filename) or "": i for i in entries}
            return {name: zf.read(info) for name, info in named.items()
                    if names is None or name in names}
    except ZIP_ERRORS as exc:
        raise InputError(archive, None, f"unreadable zip: {exc}") from None


def check_zip(source: bytes | Path, name: str | Path) -> None:
    """Refuse a zip (in memory, as an xlsx or docx, or a file such as an inspect_ai .eval log)
    whose entries declare too much, before a library decompresses them."""
    try:
        with (io.BytesIO(source) if isinstance(source, bytes) else open_regular(source)) as fh, \
                zipfile.ZipFile(fh) as zf:
            checked_entries(zf, name)
    except ZIP_ERRORS as exc:
        raise InputError(name, None, f"unreadable zip: {exc}") from None
