"""Load an Archipelago task package (one world exported to run on its own) as a Benchmark.

Archipelago publishes worlds this way (`examples/<world name>--(<world_id>)/` in its repository);
the marker is `tasks/*.json` beside `grader/configs/`:

```
tasks/<slug>.json                          prompt [{type, content}], rubrics [{name, weight,
                                           messages [{type, content}]}], extra {world_id,
                                           world_name, task_id, task_name, golden_responses
                                           [{golden_text_response, golden_file_responses}]}
grader/configs/<slug>_grading_config.json  grading_settings {llm_judge_model}, verifiers
                                           [{verifier_id, verifier_values {criteria,
                                           criteria_explanation, weight, is_primary_objective}}]
tools/files/<slug>/...                     the task's own files, laid over the world's files
tools/.apps_data/<slug>/...                the task's own app data (mail, calendar, chat)
files/, tools/.apps_data/<app>/            the world's shared files and app data, which the
                                           published package leaves out (download_data.sh
                                           fetches them)
```

A task's id is `extra.task_id` (the `task_<hex>` its runs are filed under), else its slug; its
criteria are the grader's verifiers (with their explanation and weight), else the task's own
rubrics, whose names end in the verifier id. Where `files/` is absent the world is described
without files (`World.source` None): `input_world_files_missing` says so and the checks that read
a world skip its tasks. A gold that is a file is recorded as one with no files (the package does
not hold them). The grader's judge model and expected file types have no place in a Task.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rubric_audit.core.errors import InputError, read_json, validated
from rubric_audit.core.model import (
    Benchmark,
    Criterion,
    Gold,
    Number,
    PathSafeId,
    Task,
    World,
    safe_id,
)
from rubric_audit.load.apex import check_unique_ids

TASKS_DIR = "tasks"
GRADER_CONFIGS = Path("grader") / "configs"
GRADING_CONFIG_SUFFIX = "_grading_config.json"
WORLD_FILES = "files"
TASK_FILES = Path("tools") / "files"
APPS_DATA = Path("tools") / ".apps_data"
VERIFIER_IN_NAME = re.compile(r"\(([^()]+)\)\s*$")


class _Package(BaseModel):
    """The package's files, typed where rubric-audit reads them (other fields are ignored)."""

    model_config = ConfigDict(extra="ignore")


class Part(_Package):
    type: str = "text"
    content: Any = ""


class GoldenResponse(_Package):
    golden_text_response: str | None = None
    golden_file_responses: Any = None


class TaskExtra(_Package):
    world_id: PathSafeId | None = None
    world_name: str = ""
    task_id: PathSafeId | None = None
    task_name: str = ""
    golden_responses: list[GoldenResponse] | None = None


class Rubric(_Package):
    name: str = ""
    weight: Number | None = None
    messages: list[Part] = Field(default_factory=list)


class PackageTask(_Package):
    prompt: list[Part]
    rubrics: list[Rubric] = Field(default_factory=list)
    extra: TaskExtra = Field(default_factory=TaskExtra)

    @field_validator("prompt", mode="before")
    @classmethod
    def _plain_prompt(cls, value: Any) -> Any:
        """A prompt written as plain text is its one text part."""
        return [{"type": "text", "content": value}] if isinstance(value, str) else value


class VerifierValues(_Package):
    criteria: str = ""
    criteria_explanation: str | None = None
    weight: Number | None = None
    is_primary_objective: bool | None = None  # written as true or as "true"


class Verifier(_Package):
    verifier_id: str = Field(min_length=1)
    verifier_values: VerifierValues = Field(default_factory=VerifierValues)


class GradingConfig(_Package):
    verifiers: list[Verifier] = Field(default_factory=list)


def is_task_package(root: Path) -> bool:
    root = Path(root)
    return (root / GRADER_CONFIGS).is_dir() and any((root / TASKS_DIR).glob("*.json"))


def task_slugs(root: Path) -> list[str]:
    """The package's task names: its task files' names without `.json`."""
    return sorted(p.stem for p in (Path(root) / TASKS_DIR).glob("*.json")
                  if p.is_file() or p.is_symlink())


def _read(path: Path) -> Any:
    """A package file's JSON; a symbolic link (which could name any file here) is refused."""
    if path.is_symlink():
        raise InputError(path, None, "is a symbolic link: a task package's files must be in it")
    return read_json(path)


def _text(parts: list[Part]) -> str:
    """The text of a prompt or message: its text parts, one paragraph each; any other part is
    named by its type, never guessed at."""
    return "\n\n".join(p.content if p.type == "text" and isinstance(p.content, str)
                       else f"[{p.type}]" for p in parts)


def _criteria(path: Path, raw: PackageTask, config: GradingConfig | None) -> list[Criterion]:
    """The grader's verifiers, else the task's rubrics (ids from the end of their names)."""
    if config is not None:
        check_unique_ids([v.verifier_id for v in config.verifiers], path,
                         "verifiers[{}].verifier_id", "verifiers[{}]", "verifier_id {}")
        return [Criterion(id=v.verifier_id, text=v.verifier_values.criteria,
                          explanation=v.verifier_values.criteria_explanation or "",
                          weight=1.0 if v.verifier_values.weight is None
                          else v.verifier_values.weight,
                          primary=bool(v.verifier_values.is_primary_objective))
                for v in config.verifiers]
    ids = [(m.group(1) if (m := VERIFIER_IN_NAME.search(r.name)) else f"rubric_{i + 1}")
           for i, r in enumerate(raw.rubrics)]
    check_unique_ids(ids, path, "rubrics[{}].name", "rubrics[{}]", "verifier id {}")
    return [Criterion(id=key, text=_text(r.messages), weight=1.0 if r.weight is None else r.weight)
            for key, r in zip(ids, raw.rubrics, strict=True)]


def _gold(raw: PackageTask) -> Gold | None:
    responses = raw.extra.golden_responses or []
    text = next((g.golden_text_response for g in responses
                 if (g.golden_text_response or "").strip()), None)
    if text is not None:
        return Gold(type="text", text=text)
    if any(g.golden_file_responses for g in responses):
        return Gold(type="file")
    return None


def _task(root: Path, slug: str, package_world: str) -> tuple[Task, str]:
    """One task, and its world's name as the task gives it."""
    path = root / TASKS_DIR / f"{slug}.json"
    raw = validated(path, _read(path), PackageTask)
    config_path = root / GRADER_CONFIGS / f"{slug}{GRADING_CONFIG_SUFFIX}"
    config = (validated(config_path, _read(config_path), GradingConfig)
              if config_path.is_file() or config_path.is_symlink() else None)
    own = [root / TASK_FILES / slug, root / APPS_DATA / slug]
    task = Task(
        id=raw.extra.task_id or safe_id(slug), name=raw.extra.task_name or slug,
        world_id=raw.extra.world_id or package_world, prompt=_text(raw.prompt),
        criteria=_criteria(config_path if config else path, raw, config), gold=_gold(raw),
        overlay=(TASK_FILES / slug).as_posix() if any(p.is_dir() for p in own) else None)
    return task, raw.extra.world_name


def load_task_package(root: Path) -> Benchmark:
    """Every task of the package, in the world (or worlds) they name; a task without its own
    world id is in the package's world, named by the package's folder."""
    root = Path(root)
    slugs = task_slugs(root)
    if not slugs:
        raise InputError(root / TASKS_DIR, None, "no task files (*.json)")
    package_world = safe_id(root.resolve().name)
    tasks: list[Task] = []
    world_names: dict[str, str] = {}
    slug_of: dict[str, str] = {}
    for slug in slugs:
        task, world_name = _task(root, slug, package_world)
        if task.id in slug_of:
            raise InputError(root / TASKS_DIR / f"{slug}.json", "extra.task_id",
                             f"duplicate task id {task.id!r} (also in {slug_of[task.id]}.json)")
        slug_of[task.id] = slug
        tasks.append(task)
        world_names[task.world_id] = world_names.get(task.world_id) or world_name
    source = WORLD_FILES if (root / WORLD_FILES).is_dir() else None
    worlds = [World(id=world_id, name=name, source=source, layout="task-package")
              for world_id, name in sorted(world_names.items())]
    return Benchmark(name=package_world, root=str(root), tasks=tasks, worlds=worlds)
