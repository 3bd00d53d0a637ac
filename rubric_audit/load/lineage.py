"""A benchmark's version: the sha256 of its tasks file, and the lineage its patch.json records.

`rubric-audit patch` writes patch.json into the benchmark it makes (docs/formats.md): one entry
per change, the version it was patched from with that version's own lineage, and what
verification found. A benchmark without patch.json is an original: its version has no lineage.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rubric_audit.core.errors import read_json, validated
from rubric_audit.core.model import BenchmarkVersion, Task

PATCH_FILE = "patch.json"
PATCH_FORMAT: Literal["rubric-audit patch 1"] = "rubric-audit patch 1"
ChangedField = Literal["criterion", "explanation", "gold", "prompt", "recipe"]
GRADED_FIELDS = ("criterion", "prompt")
"""What a grader reads of a task (the judge never sees the gold or an explanation)."""


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PatchChange(_Read):
    """One change of a patch: what a field of a task held before and holds now, why, and who
    accepted it. An `after` of "" for a criterion removes it."""

    proposal: str
    kind: str
    task: str
    task_name: str = ""
    criterion: str | None = None
    field: ChangedField
    before: str
    after: str
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    decision: Literal["accept", "edit", "derived"]
    accepted_by: str
    written_by: str


class PatchParent(_Read):
    """The version a patch was made from, with the versions that one came from."""

    name: str
    version: str
    lineage: list[str] = Field(default_factory=list)
    changed_tasks: list[str] = Field(default_factory=list)


class PatchRecord(_Read):
    """patch.json: the changes from the parent version and what verification found."""

    format: Literal["rubric-audit patch 1"]
    tool_version: str = ""
    parent: PatchParent
    version: str
    changes: list[PatchChange]
    verification: dict[str, Any] = Field(default_factory=dict)

    def changed_tasks(self) -> list[str]:
        """Every task whose prompt or rubric (what a grader reads) changed since the first
        version of the lineage: the parent's and this patch's own."""
        return sorted(set(self.parent.changed_tasks)
                      | {c.task for c in self.changes if c.field in GRADED_FIELDS})


def read_patch_record(root: Path) -> PatchRecord | None:
    """ROOT/patch.json, validated; None for an original benchmark."""
    path = root / PATCH_FILE
    return validated(path, read_json(path), PatchRecord) if path.is_file() else None


def benchmark_version(root: Path, tasks_file: str, data: bytes) -> BenchmarkVersion:
    """The version of the benchmark at `root` whose tasks file `tasks_file` holds `data`."""
    record = read_patch_record(root)
    return BenchmarkVersion(
        sha256=hashlib.sha256(data).hexdigest(), of=tasks_file,
        lineage=[*record.parent.lineage, record.parent.version] if record else [],
        changed_tasks=record.changed_tasks() if record else [])


def tasks_version(tasks: list[Task]) -> BenchmarkVersion:
    """The version of a benchmark whose layout has no one tasks file: its tasks as read."""
    data = "\n".join(t.model_dump_json() for t in tasks).encode()
    return BenchmarkVersion(sha256=hashlib.sha256(data).hexdigest(), of="its tasks as read")
