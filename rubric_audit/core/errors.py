"""Errors for input rubric-audit cannot use: each names the file and the field at fault."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, overload

from pydantic import BaseModel, TypeAdapter, ValidationError

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class InputError(Exception):
    """Unusable input. The CLI prints it on one line and exits with code 2."""

    def __init__(self, file: str | Path, field: str | None, problem: str) -> None:
        self.file = str(file)
        self.field = field
        self.problem = problem
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}: {self.field}" if self.field else self.file
        return f"{where}: {self.problem}"

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str | None, str]]:
        """Pickled by its parts (a worker process reports it to the audit as it was)."""
        return InputError, (self.file, self.field, self.problem)


class InputProblems(Exception):
    """Several problems found in one input at once (a keymap's unknown ids and clashing keys):
    the CLI prints one line for each and exits with code 2."""

    def __init__(self, problems: list[InputError]) -> None:
        self.problems = problems
        super().__init__("\n".join(map(str, problems)))


def input_error_in(exc: BaseException) -> InputError | None:
    """The first InputError in `exc` or, for an exception group (a task group's), among the
    exceptions it holds at any depth; None where there is none."""
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if isinstance(current, InputError):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending[:0] = current.exceptions
    return None


MAX_FILE_BYTES = 100 * 2**20
"""Any one foreign file read whole (JSON, CSV, mbox, a world file, a zip entry)."""


def too_big(size: int, limit: int) -> str:
    return f"{size:,} bytes; the limit is {limit:,}"


NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX, where rubric-audit runs


def _regular_descriptor(path: Path | str) -> tuple[int, int]:
    """A regular file opened for reading, as (descriptor, size). A symbolic link is refused, not
    followed (it could name any file on this machine, whose text would then reach audit.db and
    a judge), and so is a named pipe or a device (opened without blocking, so a FIFO cannot hang
    the read)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | NO_FOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(path, None, "a symbolic link: not followed") from None
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(descriptor)
    except OSError as exc:
        os.close(descriptor)
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        os.close(descriptor)
        raise InputError(path, None, "not a regular file (a pipe, device or folder)")
    return descriptor, info.st_size


def open_regular(path: Path | str) -> BinaryIO:
    """A regular file opened for reading (`_regular_descriptor`: no link followed, no pipe or
    device read)."""
    descriptor, _ = _regular_descriptor(path)
    return os.fdopen(descriptor, "rb")


def utf8_path(path: Path) -> Path:
    """`path` itself, refused where it is not UTF-8: os.fsdecode keeps such bytes as lone
    surrogates, which no sink (a terminal, audit.db, a report) can write. The error line shows
    them escaped (`\\udcff`)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(path, None, "name is not UTF-8 (its bytes shown escaped)") from None
    return path


def files_under(root: Path) -> Iterator[Path]:
    """Every regular file under `root`, in sorted order, each folder's files before its
    subfolders'; links are neither listed nor entered. The walk is iterative (a tree of any depth
    is no RecursionError, as os.walk and Path.rglob are) and every name must be UTF-8."""
    pending = [utf8_path(root)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            raise InputError(folder, None, f"cannot read: {exc.strerror or exc}") from None
        folders = []
        for entry in entries:
            path = utf8_path(Path(entry.path))
            if entry.is_dir(follow_symlinks=False):
                folders.append(path)
            elif entry.is_file(follow_symlinks=False):
                yield path
        pending += reversed(folders)


def read_bytes(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file's bytes (`_regular_descriptor`), refused by its size before it is read
    (and if it grows while read). Read from the descriptor itself: an archive's runs are
    hundreds of thousands of small files, and a file object each cost more than the read."""
    descriptor, size = _regular_descriptor(path)
    try:
        if size > limit:
            raise InputError(path, None, f"file too large: {too_big(size, limit)}")
        # ask for the size the file has (and one more, to see it grow), then for the rest of
        # the limit only if it did grow
        data = _read_up_to(descriptor, size + 1)
        if len(data) > size:
            data += _read_up_to(descriptor, limit + 1 - len(data))
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise InputError(path, None, f"file too large: more than {limit:,} bytes")
    return data


def _read_up_to(descriptor: int, wanted: int) -> bytes:
    """Up to `wanted` bytes from the descriptor, fewer only at the end of the file."""
    parts, got = [], 0
    while got < wanted and (part := os.read(descriptor, wanted - got)):
        parts.append(part)
        got += len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def file_digest(path: Path | str, limit: int) -> bytes:
    """A regular file's SHA-256 (`open_regular`), read a block at a time and refused by its size
    first (for files kept whole on disk, such as a workspace snapshot, that may exceed what is
    read whole)."""
    digest = hashlib.sha256()
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > limit:
                raise InputError(path, None, f"file too large: {too_big(size, limit)}")
            for block in iter(lambda: fh.read(2**20), b""):
                digest.update(block)
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return digest.digest()


def read_text(path: Path) -> str:
    """A UTF-8 text file, size-capped; other encodings and lone surrogates are unusable."""
    return decode_text(path, read_bytes(path))


def read_own_text(path: Path) -> str:
    """A UTF-8 text file the user gave as their own (a system prompt, a keymap): a link is
    followed (it is theirs, as dotfiles often are), other encodings are unusable."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return decode_text(path, data)


def decode_text(path: Path, data: bytes) -> str:
    """The bytes read from `path` as UTF-8 text; other encodings and lone surrogates are unusable."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"not UTF-8 text (byte {exc.start})") from None


def parse_json(name: str | Path, text: str | bytes) -> Any:
    """Parse JSON text, turning syntax errors into an InputError with line and column; deep
    nesting and strings that are not valid Unicode (lone surrogates) are unusable too."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(name, None, f"malformed JSON (line {exc.lineno}, column {exc.colno}: "
                                     f"{exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise InputError(name, None, f"not UTF-8 text (byte {exc.start})") from None
    except ValueError:  # Python's int() refuses more than 4,300 digits
        raise InputError(name, None, "a number too long to read (over 4,300 digits)") from None
    except RecursionError:
        raise InputError(name, None, "JSON nested too deeply") from None
    bad = _invalid_string(data) if _may_hold_surrogates(text) else None
    if bad is not None:
        raise InputError(name, bad or "(top level)", "text is not valid Unicode (a lone "
                                                     "surrogate escape)")
    return data


SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _may_hold_surrogates(text: str | bytes) -> bool:
    """Whether parsed JSON can hold a lone surrogate: only from a \\uD800-\\uDFFF escape or a
    surrogate already in the text (json decodes bytes with 'surrogatepass', and UTF-16 or 32
    itself). Most documents have neither, and then the walk over every string is skipped."""
    if isinstance(text, bytes):
        if b"\0" in text:
            return True
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return True
    if SURROGATE_ESCAPE.search(text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _invalid_string(data: Any) -> str | None:
    """Where in parsed JSON a string (value or key) cannot be encoded as UTF-8, else None."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                stack += [(where, key), (field_path(where, (key,)), item)]
        elif isinstance(value, list):
            stack += [(field_path(where, (i,)), item) for i, item in enumerate(value)]
        elif isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where
    return None


def read_json(path: Path) -> Any:
    """Parse a JSON file (size-capped, UTF-8)."""
    return parse_json(path, read_text(path))


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as `prefix[3].rubric[0].criteria`; a key that is no
    plain name (a stranger's, holding a newline, a dot or a space) as `['a\\nb']`, so the path
    stays one line and reads back unambiguously."""
    out = prefix
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not PLAIN_KEY.fullmatch(str(part)):
            out += f"[{str(part)!r}]"
        else:
            out += f".{part}" if out else str(part)
    return out


PLAIN_KEY = re.compile(r"[A-Za-z0-9_\-]+")


@overload
def validated(path: Path, data: Any, model: type[M], prefix: str = "") -> M: ...
@overload
def validated(path: Path, data: Any, model: TypeAdapter[T], prefix: str = "") -> T: ...
def validated(path: Path, data: Any, model: type[M] | TypeAdapter[T], prefix: str = "") -> M | T:
    """Parsed data checked by its model (a pydantic model or a TypeAdapter): a value of the wrong
    kind is an InputError naming its field (after `prefix`, e.g. the item's `[3]`)."""
    try:
        if isinstance(model, TypeAdapter):
            return model.validate_python(data)
        return model.model_validate(data)
    except ValidationError as exc:
        raise invalid(path, prefix, exc) from None


def read_model(path: Path, model: type[M]) -> M:
    """A JSON file (size-capped, UTF-8) validated by its model."""
    return validated(path, read_json(path), model)


def invalid(path: Path, prefix: str, exc: ValidationError) -> InputError:
    """The first problem pydantic found, as an InputError naming its field."""
    err = exc.errors()[0]
    problem = ("missing required field" if err["type"] == "missing"
               else err["msg"].removeprefix("Value error, "))
    return InputError(path, field_path(prefix, err["loc"]) or "(top level)", problem)
