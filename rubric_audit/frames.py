"""An audit's tables as pandas DataFrames, for notebooks: `frames.load("reports/sample")`."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from rubric_audit.atomic import write_atomic
from rubric_audit.checks.controls import Control
from rubric_audit.errors import InputError
from rubric_audit.model import CriterionGrade, Finding, Review
from rubric_audit.store import AuditStore


def _open(path: Path) -> AuditStore:
    db = path / "audit.db" if path.is_dir() else path
    if not db.is_file():
        raise InputError(db, None, "no audit.db here: run `rubric-audit audit` first")
    return AuditStore(db)


def load(path: str | Path) -> dict[str, pd.DataFrame]:
    """Every table of an audit (folder or audit.db) as a DataFrame, keyed by table name."""
    with _open(Path(path)) as store:
        attempts = [a.model_dump(exclude={"trajectory"}) | {
            f"usage_{k}": v for k, v in a.usage.model_dump().items()} for a in store.attempts()]
        for row in attempts:
            row.pop("usage")
        return {
            "attempts": pd.DataFrame(attempts),
            "grades": pd.DataFrame([g.model_dump() for g in store.grades()],
                                   columns=list(CriterionGrade.model_fields)),
            "controls": pd.DataFrame([c.model_dump() for c in store.controls()],
                                     columns=list(Control.model_fields)),
            "control_grades": pd.DataFrame(
                [{**g.grade.model_dump(), "control_id": g.grade.attempt_id, "repeat": g.repeat,
                  "task_version": g.task_version} for g in store.control_grades()]),
            "findings": pd.DataFrame([f.model_dump() for f in store.findings()],
                                     columns=list(Finding.model_fields)),
            "reviews": pd.DataFrame([{"entry": i, **r.model_dump()} for i, r in store.reviews()],
                                    columns=["entry", *Review.model_fields]),
        }


def export(path: Path, fmt: str) -> list[Path]:
    """Write every table to `<path>/export/<table>.<fmt>` (csv or json); returns the files."""
    if fmt not in ("csv", "json"):
        raise InputError("--format", None, f"expected csv or json, got {fmt!r}")
    folder = (path if path.is_dir() else path.parent) / "export"
    folder.mkdir(exist_ok=True)
    written = []
    for name, frame in load(path).items():
        target = folder / f"{name}.{fmt}"
        write_atomic(target, frame.to_csv(index=False) if fmt == "csv"
                     else frame.to_json(orient="records", indent=2))
        written.append(target)
    return written
