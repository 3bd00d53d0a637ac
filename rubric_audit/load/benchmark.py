"""Load a benchmark directory in any layout rubric-audit reads, each by its own loader.

A layout is known by its marker files: the APEX dataset by `tasks_and_rubrics.json` (`apex.py`),
an Archipelago task package by `tasks/*.json` beside `grader/configs/` (`task_package.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import Benchmark
from rubric_audit.load.apex import TASKS_FILE, is_apex, load_apex
from rubric_audit.load.lineage import tasks_version
from rubric_audit.load.task_package import is_task_package, load_task_package

LAYOUTS: list[tuple[str, Callable[[Path], bool], Callable[[Path], Benchmark]]] = [
    (f"an APEX dataset ({TASKS_FILE})", is_apex, load_apex),
    ("an Archipelago task package (tasks/*.json and grader/configs/)", is_task_package,
     load_task_package),
]


AUDIT_OUTPUT = ("audit.db", "audit.json")
"""What an audit's output folder holds (`audit --out`), so one given as a benchmark or as runs is
named as what it is."""


def is_benchmark(path: Path) -> bool:
    """Whether `path` is a benchmark directory of a layout rubric-audit reads."""
    return Path(path).is_dir() and any(marks(Path(path)) for _, marks, _ in LAYOUTS)


def is_audit_output(path: Path) -> bool:
    """Whether `path` is an audit's output folder (holds audit.db or audit.json)."""
    return Path(path).is_dir() and any((Path(path) / name).is_file() for name in AUDIT_OUTPUT)


def refuse_benchmark_as_output(path: Path, option: str) -> None:
    """A benchmark given where an output folder belongs is refused, named as such, before
    anything is written into it."""
    if is_benchmark(path):
        raise InputError(path, option, "a benchmark, not an output folder: the audit would write "
                                       "its store and reports among the benchmark's files; give "
                                       "a folder of its own")


def load_benchmark(root: Path) -> Benchmark:
    """The benchmark at `root`, read by the loader of the layout its marker files name, with
    its version (a layout without one tasks file: of its tasks as read)."""
    root = Path(root)
    for _, marks, load in LAYOUTS:
        if root.is_dir() and marks(root):
            bench = load(root)
            return bench if bench.version else bench.model_copy(
                update={"version": tasks_version(bench.tasks)})
    if is_audit_output(root):
        raise InputError(root, None, "an audit's output folder (audit.db, reports), not a "
                                     "benchmark: give the benchmark folder it audited")
    raise InputError(root, None, "not a benchmark directory: expected "
                                 + " or ".join(name for name, _, _ in LAYOUTS))
