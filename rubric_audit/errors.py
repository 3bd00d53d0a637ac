"""Errors for input rubric-audit cannot use: each names the file and the field at fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError


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


def read_json(path: Path) -> Any:
    """Parse a JSON file, turning syntax errors into an InputError with line and column."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(path, None, f"malformed JSON (line {exc.lineno}, column {exc.colno}: "
                                     f"{exc.msg})") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror}") from None


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as `prefix[3].rubric[0].criteria`."""
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def invalid(path: Path, prefix: str, exc: ValidationError) -> InputError:
    """The first problem pydantic found, as an InputError naming its field."""
    err = exc.errors()[0]
    problem = "missing required field" if err["type"] == "missing" else err["msg"]
    return InputError(path, field_path(prefix, err["loc"]) or "(top level)", problem)
