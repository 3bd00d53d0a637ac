"""The world's files in a session: list, read (text, docx, pdf, xlsx by range), write.

The world's files are read from memory, shared by every session of the world and never written;
a file the agent writes is kept in a folder of the session's own, made at its first write, and
read from there after (copy on write). Every path is relative to the world's `filesystem/`
folder; absolute paths, `..` and symlinks in that folder are refused, so nothing outside the
session (rubric, golds, other tasks) can be reached.
"""

from __future__ import annotations

import io
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from openpyxl.utils import range_boundaries
from openpyxl.utils.cell import column_index_from_string, coordinate_from_string

from mock_workspace.errors import WorkspaceError
from mock_workspace.paging import page
from rubric_audit.core.errors import InputError
from rubric_audit.core.workbook import Cell, WorkbookError, workbook_cells
from rubric_audit.load.world import file_text

MAX_READ_CHARS = 20_000
MAX_CELLS = 500
MAX_WRITE_BYTES = 1_000_000


def _order(rel: str) -> tuple[str, ...]:
    """Paths in the order a folder's walk sorted them: by their parts, so `a/b` before `a-c`."""
    return PurePosixPath(rel).parts


class FileStore:
    """The world's files (`original`, by path relative to `filesystem/`; shared, read-only) under
    the files this session wrote, kept in `root` (None until the first write)."""

    def __init__(self, original: Mapping[str, bytes], prefix: str = "workspace-") -> None:
        self.original = original
        self.root: Path | None = None
        self._prefix = prefix
        self._written: set[str] = set()
        self._sheets: dict[tuple[str, bytes], list[Cell]] = {}

    def close(self) -> None:
        """Remove the session's folder, if a write made one."""
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)

    def resolve(self, path: str, must_exist: bool = True) -> str:
        """The file or folder a relative path names, as its path relative to the root ("" for
        the root), refusing anything that leaves the world."""
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if not path or path.startswith(("/", "\\")) or (parts and ":" in parts[0]):
            raise WorkspaceError(f"path must be relative to the workspace: {path!r}")
        if ".." in parts:
            raise WorkspaceError(f"path leaves the workspace: {path!r}")
        rel = "/".join(parts)
        if must_exist and not (self._is_file(rel) or self._is_folder(rel)):
            raise WorkspaceError(f"no such file or folder: {path!r}")
        return rel

    def list_files(self, path: str = ".", offset: int = 0, limit: int = 100) -> dict[str, Any]:
        folder = self.resolve(path)
        if not self._is_folder(folder):
            raise WorkspaceError(f"not a folder: {path!r}")
        prefix = f"{folder}/" if folder else ""
        entries = [{"path": rel, "size": size}
                   for rel in sorted((rel for rel in self._files() if rel.startswith(prefix)),
                                     key=_order)
                   if (size := self._size(rel)) is not None]
        return page(entries, offset, limit)

    def read(self, path: str, offset: int = 0, limit: int = MAX_READ_CHARS) -> dict[str, Any]:
        rel, data = self._file(path)
        suffix = PurePosixPath(rel).suffix.lower()
        if suffix in (".xlsx", ".xlsm"):
            names = [c.sheet for c in self._cells(rel, data)]
            raise WorkspaceError(f"{path} is a workbook with sheets {sorted(set(names))}: use "
                                 f"files_read_sheet to read its cells")
        text: str | None
        if suffix == ".pdf":
            text = _pdf_text(data, path)
        else:
            try:
                text = file_text(PurePosixPath(rel).name, data)
            except InputError as exc:
                raise WorkspaceError(f"cannot read {path}: {exc.problem}") from None
        if text is None:
            raise WorkspaceError(f"{path} is a binary {suffix or 'file'} with no text to read")
        if offset < 0 or limit < 1:
            raise WorkspaceError("offset must be >= 0 and limit >= 1")
        limit = min(limit, MAX_READ_CHARS)
        end = min(offset + limit, len(text))
        return {"path": path, "offset": offset, "text": text[offset:end], "total_chars": len(text),
                "next_offset": end if end < len(text) else None}

    def read_sheet(self, path: str, sheet: str | None = None, cell_range: str | None = None,
                   offset: int = 0, limit: int = MAX_CELLS) -> dict[str, Any]:
        cells = self._cells(*self._file(path))
        sheets = list(dict.fromkeys(c.sheet for c in cells))
        chosen = sheet or (sheets[0] if sheets else None)
        if chosen not in sheets:
            raise WorkspaceError(f"no sheet {sheet!r} in {path}; sheets: {sheets}")
        selected = [c for c in cells if c.sheet == chosen]
        if cell_range:
            selected = [c for c in selected if _in_range(c.coordinate, cell_range)]
        rows = [{"cell": c.coordinate, "value": c.value, "formula": c.formula} for c in selected]
        return {"path": path, "sheets": sheets, "sheet": chosen, "range": cell_range,
                **page(rows, offset, limit, cap=MAX_CELLS)}

    def write(self, path: str, content: str, overwrite: bool = False) -> dict[str, Any]:
        data = content.encode("utf-8")
        if len(data) > MAX_WRITE_BYTES:
            raise WorkspaceError(f"content is {len(data):,} bytes; the limit is "
                                 f"{MAX_WRITE_BYTES:,}")
        rel = self.resolve(path, must_exist=False)
        if self._is_folder(rel):
            raise WorkspaceError(f"{path} is a folder")
        if file := next((p for p in _parents(rel) if self._is_file(p)), None):
            raise WorkspaceError(f"{file} is a file, not a folder")
        existed = self._is_file(rel)
        if existed and not overwrite:
            raise WorkspaceError(f"{path} exists; pass overwrite=true to replace it")
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix=self._prefix))
        target = self._on_disk(rel, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self._written.add(rel)
        return {"path": path, "size": len(data), "created": not existed}

    def changed(self) -> list[tuple[str, bytes]]:
        """The files written since the session started whose bytes differ from the world's, as
        (path, bytes) in path order (one reached through a symbolic link is left out)."""
        changed = []
        for rel in sorted(self._written, key=_order):
            try:
                target = self._on_disk(rel, rel)
            except WorkspaceError:
                continue
            if target.is_file() and (data := target.read_bytes()) != self.original.get(rel):
                changed.append((rel, data))
        return changed

    def _files(self) -> Iterator[str]:
        yield from self.original
        yield from (rel for rel in self._written if rel not in self.original)

    def _is_file(self, rel: str) -> bool:
        return rel in self._written or rel in self.original

    def _is_folder(self, rel: str) -> bool:
        prefix = f"{rel}/"
        return not rel or any(p.startswith(prefix) for p in self._files())

    def _size(self, rel: str) -> int | None:
        """The file's size; None for a written file that is gone or reached through a link now."""
        if rel not in self._written:
            return len(self.original[rel])
        try:
            return self._on_disk(rel, rel).stat().st_size
        except (WorkspaceError, OSError):
            return None

    def _on_disk(self, rel: str, path: str) -> Path:
        """Where the session keeps `rel`, refusing a symbolic link on the way to it."""
        assert self.root is not None
        target = self.root.joinpath(*PurePosixPath(rel).parts)
        probe = self.root
        for part in PurePosixPath(rel).parts:
            probe = probe / part
            if probe.is_symlink():
                raise WorkspaceError(f"symbolic links are not followed: {path!r}")
        if not target.resolve().is_relative_to(self.root.resolve()):
            raise WorkspaceError(f"path leaves the workspace: {path!r}")
        return target

    def _file(self, path: str) -> tuple[str, bytes]:
        rel = self.resolve(path)
        if not self._is_file(rel):
            raise WorkspaceError(f"not a file: {path!r}")
        if rel in self._written:
            return rel, self._on_disk(rel, path).read_bytes()
        return rel, self.original[rel]

    def _cells(self, rel: str, data: bytes) -> list[Cell]:
        key = (rel, data)
        if key not in self._sheets:
            try:
                self._sheets[key] = workbook_cells(data)
            except WorkbookError as exc:
                raise WorkspaceError(f"cannot read {PurePosixPath(rel).name}: {exc}") from None
        return self._sheets[key]


def _parents(rel: str) -> list[str]:
    """The folders above `rel`, as paths relative to the root (the root left out)."""
    return [p.as_posix() for p in PurePosixPath(rel).parents if p.as_posix() != "."]


def _in_range(coordinate: str, cell_range: str) -> bool:
    try:
        min_col, min_row, max_col, max_row = range_boundaries(cell_range.upper())
    except ValueError:
        raise WorkspaceError(f"not a cell range: {cell_range!r} (use e.g. A1:D20)") from None
    letters, row = coordinate_from_string(coordinate)
    col = column_index_from_string(letters)
    return (min_col or 1) <= col <= (max_col or col) and (min_row or 1) <= row <= (max_row or row)


def _pdf_text(data: bytes, path: str) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(data)).pages)
    except (PdfReadError, ValueError) as exc:
        raise WorkspaceError(f"cannot read {path}: {exc}") from None
