"""The world's files in the session copy: list, read (text, docx, pdf, xlsx by range), write.

Every path is relative to the world's `filesystem/` folder; absolute paths, `..` and symlinks are
refused, so nothing outside the copy (rubric, golds, other tasks) can be reached.
"""

from __future__ import annotations

import hashlib
import io
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


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileStore:
    """Files under `root` (the copy's filesystem/), with the original contents remembered."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.original = {p: _digest(p.read_bytes()) for p in root.rglob("*") if p.is_file()}
        self._sheets: dict[tuple[Path, str], list[Cell]] = {}

    def resolve(self, path: str, must_exist: bool = True) -> Path:
        """The file a relative path names, refusing anything that leaves the world."""
        parts = PurePosixPath(path.replace("\\", "/")).parts
        if not path or path.startswith(("/", "\\")) or (parts and ":" in parts[0]):
            raise WorkspaceError(f"path must be relative to the workspace: {path!r}")
        if ".." in parts:
            raise WorkspaceError(f"path leaves the workspace: {path!r}")
        target = self.root.joinpath(*parts)
        probe = self.root
        for part in parts:
            probe = probe / part
            if probe.is_symlink():
                raise WorkspaceError(f"symbolic links are not followed: {path!r}")
        if not target.resolve().is_relative_to(self.root.resolve()):
            raise WorkspaceError(f"path leaves the workspace: {path!r}")
        if must_exist and not target.exists():
            raise WorkspaceError(f"no such file or folder: {path!r}")
        return target

    def list_files(self, path: str = ".", offset: int = 0, limit: int = 100) -> dict[str, Any]:
        folder = self.resolve(path)
        if not folder.is_dir():
            raise WorkspaceError(f"not a folder: {path!r}")
        entries = [{"path": p.relative_to(self.root).as_posix(), "size": p.stat().st_size}
                   for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()]
        return page(entries, offset, limit)

    def read(self, path: str, offset: int = 0, limit: int = MAX_READ_CHARS) -> dict[str, Any]:
        target = self._file(path)
        suffix = target.suffix.lower()
        if suffix in (".xlsx", ".xlsm"):
            names = [c.sheet for c in self._cells(target)]
            raise WorkspaceError(f"{path} is a workbook with sheets {sorted(set(names))}: use "
                                 f"files_read_sheet to read its cells")
        data = target.read_bytes()
        text: str | None
        if suffix == ".pdf":
            text = _pdf_text(data, path)
        else:
            try:
                text = file_text(target.name, data)
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
        cells = self._cells(self._file(path))
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
        target = self.resolve(path, must_exist=False)
        if target.is_dir():
            raise WorkspaceError(f"{path} is a folder")
        existed = target.exists()
        if existed and not overwrite:
            raise WorkspaceError(f"{path} exists; pass overwrite=true to replace it")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return {"path": path, "size": len(data), "created": not existed}

    def changed(self) -> list[Path]:
        """Files created or edited since the session started (symbolic links are not followed)."""
        return [p for p in sorted(self.root.rglob("*")) if p.is_file() and not p.is_symlink()
                and self.original.get(p) != _digest(p.read_bytes())]

    def _file(self, path: str) -> Path:
        target = self.resolve(path)
        if not target.is_file():
            raise WorkspaceError(f"not a file: {path!r}")
        return target

    def _cells(self, target: Path) -> list[Cell]:
        data = target.read_bytes()
        key = (target, _digest(data))
        if key not in self._sheets:
            try:
                self._sheets[key] = workbook_cells(data)
            except WorkbookError as exc:
                raise WorkspaceError(f"cannot read {target.name}: {exc}") from None
        return self._sheets[key]


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
