"""Load an APEX-format benchmark directory (the public APEX-Agents dataset's layout) into a
Benchmark (see docs/formats.md); its marker is tasks_and_rubrics.json.

Unusable input raises InputError naming the file and field; anything usable is loaded as it is and
left for the `input_*` checks to report.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rubric_audit.core.errors import InputError, decode_text, files_under, parse_json, read_bytes, validated
from rubric_audit.core.model import App, Benchmark, Criterion, Gold, Number, PathSafeId, Task, World
from rubric_audit.load.lineage import benchmark_version

M = TypeVar("M", bound=BaseModel)

TASKS_FILE = "tasks_and_rubrics.json"
WORLDS_FILE = "world_descriptions.json"


class _Apex(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ApexCriterion(_Apex):
    verifier_id: str
    criteria: str
    criteria_explanation: str = ""
    weight: Number = 1.0
    is_primary_objective: bool = False


class ApexTask(_Apex):
    task_id: PathSafeId
    task_name: str = ""
    domain: str = ""
    world_id: str
    prompt: str
    rubric: list[ApexCriterion]
    gold_response: str | None = None
    gold_response_type: str = "text"
    expected_output: str | None = None
    task_input_files: Any = None


class ApexWorld(_Apex):
    world_id: PathSafeId
    world_name: str = ""
    world_description: str = ""
    domain: str = ""
    apps: list[App] = Field(default_factory=list)


def _json_list(path: Path, data: bytes | None = None) -> list[Any]:
    """The JSON list a file holds (its bytes `data`, where already read)."""
    parsed = parse_json(path, decode_text(path, read_bytes(path) if data is None else data))
    if not isinstance(parsed, list):
        raise InputError(path, "(top level)", f"expected a list, found {type(parsed).__name__}")
    return parsed


def world_source(root: Path, world_id: str) -> str | None:
    """The world's unzipped folder or zip, relative to the benchmark; a bad zip is unusable."""
    folder = root / "worlds" / world_id
    if folder.is_dir():
        return folder.relative_to(root).as_posix()
    archive = root / "world_files_zipped" / f"{world_id}.zip"
    if archive.is_file():
        if not zipfile.is_zipfile(archive):
            raise InputError(archive, None, "not a zip archive")
        return archive.relative_to(root).as_posix()
    return None


def _worlds(root: Path) -> list[World]:
    path = root / WORLDS_FILE
    if path.is_file():
        raw = [validated(path, w, ApexWorld, f"[{i}]") for i, w in enumerate(_json_list(path))]
    else:
        ids = {p.name for p in (root / "worlds").glob("*") if p.is_dir()}
        ids |= {p.stem for p in (root / "world_files_zipped").glob("*.zip")}
        raw = [validated(root, {"world_id": i}, ApexWorld) for i in sorted(ids)]
    seen: set[str] = set()
    worlds = []
    for i, w in enumerate(raw):
        if w.world_id in seen:
            raise InputError(path, f"[{i}].world_id", f"duplicate world_id {w.world_id!r}")
        seen.add(w.world_id)
        worlds.append(World(id=w.world_id, name=w.world_name, description=w.world_description,
                            domain=w.domain, apps=w.apps, source=world_source(root, w.world_id)))
    return worlds


def _gold(root: Path, raw: ApexTask, path: Path, index: int) -> Gold | None:
    if raw.gold_response_type not in ("text", "file"):
        raise InputError(path, f"[{index}].gold_response_type",
                         f"expected 'text' or 'file', found {raw.gold_response_type!r}")
    if raw.gold_response_type == "file":
        folder = root / "gold_files" / raw.task_id
        files = sorted(p.relative_to(root).as_posix()
                       for p in (files_under(folder) if folder.is_dir() else ()))
        return Gold(type="file", text=raw.gold_response or "", files=files)
    if not (raw.gold_response or "").strip():
        return None
    return Gold(type="text", text=raw.gold_response or "")


def _task(root: Path, raw: ApexTask, path: Path, index: int) -> Task:
    overlay = root / "task_files" / raw.task_id
    return Task(
        id=raw.task_id,
        name=raw.task_name or raw.task_id,
        domain=raw.domain,
        world_id=raw.world_id,
        prompt=raw.prompt,
        criteria=[
            Criterion(id=c.verifier_id, text=c.criteria, explanation=c.criteria_explanation,
                      weight=c.weight, primary=c.is_primary_objective)
            for c in raw.rubric
        ],
        gold=_gold(root, raw, path, index),
        expected_output=raw.expected_output,
        input_files_declared=bool(raw.task_input_files),
        overlay=overlay.relative_to(root).as_posix() if overlay.is_dir() else None,
    )


def check_unique_ids(ids: list[str], path: Path, field: str, first: str, what: str) -> None:
    """Grades name what they grade: `ids` (of the tasks, or of one task's criteria) may not
    repeat. `field` and `first` name the repeated one and the first one, each with a `{}` for
    its index."""
    seen: dict[str, int] = {}
    for j, key in enumerate(ids):
        if key in seen:
            raise InputError(path, field.format(j), f"duplicate {what.format(repr(key))} "
                                                    f"(first at {first.format(seen[key])})")
        seen[key] = j


def is_apex(root: Path) -> bool:
    return (Path(root) / TASKS_FILE).is_file()


def load_apex(root: Path) -> Benchmark:
    """Read tasks, worlds, overlays and gold files of the APEX benchmark at `root`."""
    root = Path(root)
    path = root / TASKS_FILE
    data = read_bytes(path)
    raw_tasks = [validated(path, item, ApexTask, f"[{i}]")
                 for i, item in enumerate(_json_list(path, data))]
    check_unique_ids([t.task_id for t in raw_tasks], path, "[{}].task_id", "[{}]", "task_id {}")
    tasks: list[Task] = []
    for i, raw in enumerate(raw_tasks):
        check_unique_ids([c.verifier_id for c in raw.rubric], path,
                         f"[{i}].rubric[{{}}].verifier_id", "rubric[{}]",
                         "verifier_id {} in this task")
        tasks.append(_task(root, raw, path, i))
    return Benchmark(name=root.resolve().name, root=str(root), tasks=tasks, worlds=_worlds(root),
                     version=benchmark_version(root, TASKS_FILE, data))
