"""An audit's tables as pandas DataFrames, for notebooks: `frames.load("reports/sample")`."""

from __future__ import annotations

import json
import types
import typing
from pathlib import Path

import pandas as pd
from pydantic import BaseModel

from rubric_audit.checks.lints import CHECK_SUMMARIES
from rubric_audit.core.atomic import write_atomic
from rubric_audit.core.errors import InputError
from rubric_audit.core.model import (
    CheckSummary,
    Control,
    CriterionGrade,
    Finding,
    FindingReview,
    Measurement,
    Review,
    SourceMetric,
    label_name,
)
from rubric_audit.core.text import csv_cell
from rubric_audit.review.session import ReviewData
from rubric_audit.store.audit_store import open_audit

_OPTIONAL_INT = {int, types.NoneType}


def _records(rows: list[dict[str, object]], model: type[BaseModel], lead: tuple[str, ...] = (),
             tail: tuple[str, ...] = ()) -> pd.DataFrame:
    """A model's records as a frame with its fields as columns (between `lead` and `tail`); an
    optional whole number (a review's `retracts`) stays whole where some are missing (pandas'
    Int64, not float)."""
    frame = pd.DataFrame(rows, columns=[*lead, *model.model_fields, *tail])
    for name, field in model.model_fields.items():
        if set(typing.get_args(field.annotation)) == _OPTIONAL_INT:
            frame[name] = frame[name].astype("Int64")
    return frame


def _named(frame: pd.DataFrame, names: dict[str, str], by: pd.Series | None = None
           ) -> pd.DataFrame:
    """The frame with a `task` column (the task's name) after its first column."""
    ids = by if by is not None else frame.get("task_id", pd.Series(dtype=object))
    frame.insert(min(1, len(frame.columns)), "task", ids.map(names) if len(frame) else [])
    return frame


def load(path: str | Path) -> dict[str, pd.DataFrame]:
    """Every table of an audit (folder or audit.db) as a DataFrame, keyed by table name; each
    carries the task's name beside its id."""
    path = Path(path)
    with open_audit(path / "audit.db" if path.is_dir() else path) as store:
        tasks = store.tasks()
        names = {t.id: t.name for t in tasks}
        attempts = [a.model_dump(exclude={"trajectory"}) | {
            f"usage_{k}": v for k, v in a.usage.model_dump().items()} for a in store.attempts()]
        for row in attempts:
            row.pop("usage")
        task_of = {a: t for a, t, *_ in store.attempt_rows()}
        controls = [c.model_dump() for c in store.controls()]
        control_task = {c["id"]: c["task_id"] for c in controls}
        grades = _records([g.model_dump() for g in store.grades()], CriterionGrade)
        measurements = _records([m.model_dump() for m in store.measurements()], Measurement)
        control_grades = pd.DataFrame(
            [{**g.grade.model_dump(), "control_id": g.grade.attempt_id, "repeat": g.repeat,
              "task_version": g.task_version} for g in store.control_grades()])
        return {
            "attempts": _named(pd.DataFrame(attempts), names),
            "grades": _named(grades, names, grades.attempt_id.map(task_of)),
            "measurements": _named(measurements, names, measurements.attempt_id.map(task_of)),
            "source_metrics": _records([m.model_dump() for m in store.source_metrics()],
                                       SourceMetric),
            "controls": _named(_records(controls, Control), names),
            "control_grades": _named(control_grades, names, control_grades.get(
                "control_id", pd.Series(dtype=object)).map(control_task)),
            "findings": _named(_records([f.model_dump() for f in store.findings()], Finding),
                               names),
            "check_summaries": pd.DataFrame(
                [{**s.model_dump(), "line": s.describe()}
                 for s in (summarise(tasks) for summarise in CHECK_SUMMARIES)],
                columns=[*CheckSummary.model_fields, "line"]),
            "reviews": _named(_records(
                [{"entry": i, **r.model_dump(), "label_name": label_name(r.label or "")}
                 for i, r in store.reviews()], Review, ("entry",), ("label_name",)), names),
            "finding_reviews": _named(_records(
                [{"entry": i, **r.model_dump()} for i, r in store.finding_reviews()],
                FindingReview, ("entry",)), names),
        }


def _csv(frame: pd.DataFrame) -> str:
    """CSV with nested values (evidence, usage lists) as JSON, not Python's repr, and no cell a
    spreadsheet would run as a formula (text.csv_cell)."""
    nested = frame.map(lambda v: csv_cell(json.dumps(v, default=str) if isinstance(v, dict | list)
                                          else v))
    return nested.to_csv(index=False)


EXPORT = "export"
"""The one folder of an audit's exports (`export`, `reviews --format`): OUT/export/."""


def export_folder(out: Path) -> Path:
    """OUT/export/, made if missing."""
    folder = (out if out.is_dir() else out.parent) / EXPORT
    folder.mkdir(exist_ok=True)
    return folder


def export(path: Path, fmt: str) -> list[Path]:
    """Write every table to `<path>/export/<table>.<fmt>` (csv or json), and beside them the
    current labels with their notes and the reviewers' agreement (`ReviewData.write_reviews`);
    returns the files."""
    if fmt not in ("csv", "json"):
        raise InputError("--format", None, f"expected csv or json, got {fmt!r}")
    tables = load(path)  # refuses a folder without an audit before anything is created
    folder = export_folder(path)
    written = []
    for name, frame in tables.items():
        target = folder / f"{name}.{fmt}"
        write_atomic(target, _csv(frame) if fmt == "csv"
                     else frame.to_json(orient="records", indent=2))
        written.append(target)
    data = ReviewData(folder.parent, "export")
    try:
        written += data.write_reviews(folder, fmt, data.label_rows(), data.agreements())
    finally:
        data.close()
    return written
