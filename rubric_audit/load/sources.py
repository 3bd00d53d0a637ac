"""Recorded runs in any format rubric-audit reads, each path read by its format's loader.

A path is an Archipelago variant folder (or a folder of them), or a Harbor trial, job or folder
of jobs, or an inspect_ai log (or a folder holding `.eval` and `.json` logs at any depth, such as
an `inspect view bundle` site), or Terminal-Bench 1 `tb run` output (a run, its summary, or a
folder of runs). Each format is recognised by its own marker files: Terminal-Bench 1 by
`run_metadata.json` or a run summary (tried first: a summary is a `.json` file too); Harbor by trial
folders (a `result.json` that is a TrialResult, or for a trial its job left unfinished a
`config.json` that is a TrialConfig); inspect_ai by its log files; Archipelago by `results.csv`,
`results.failures.jsonl` or attempt files. Harbor is tried first: finding its trials reads only
their result.json, and a trial's `agent/` folder holds Archipelago's attempt file names too. A path
that is none of them is refused naming every layout. Each loader says per source what it read and
as which format (`SourceSummary`), and the tasks are shared over every variant of every source at
the end.

Runs are read as a stream of batches (an Archipelago variant a task folder at a time; the other
formats a path at a time), so that an import holds one batch in memory, not the archive.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rubric_audit.core.errors import InputError
from rubric_audit.load.harbor import harbor_jobs, load_harbor
from rubric_audit.load.inspect_log import is_inspect_log, load_inspect
from rubric_audit.load.runs import (
    RecordedRuns,
    marked_variant_dirs,
    variant_batches,
    variant_dirs,
)
from rubric_audit.load.tb import load_tb, tb_runs

LAYOUTS = ("an Archipelago variant folder (results.csv, results.failures.jsonl or task folders "
           "of attempt files) or a folder of them; a Harbor trial, job or folder of jobs (trial "
           "folders with result.json or config.json); an inspect_ai log (.eval or .json) or a "
           "folder of logs; or Terminal-Bench 1 `tb run` output (results.json)")


@dataclass
class Source:
    """One run path, its format recognised: `variants` are its Archipelago variant folders (each
    read, or passed over, on its own); any other format is read whole by `read`."""

    path: Path
    format: str
    variants: list[Path] = field(default_factory=list)
    read: Callable[[], RecordedRuns] | None = None

    def batches(self) -> Iterator[RecordedRuns]:
        """The runs, a batch at a time (`audit.reading` reads them over worker processes)."""
        if self.read is not None:
            yield self.read()
            return
        for variant_dir in self.variants:
            yield from variant_batches(variant_dir)


def find_source(path: Path) -> Source:
    """The format of the runs under one path, by the markers of each layout in turn; a path that
    holds none of them is refused with every one of them named. A folder of Archipelago variants
    marked by their own files (results.csv, results.failures.jsonl, which no other layout writes)
    is one without a walk of its every file for the other layouts' markers."""
    if not path.exists():
        raise InputError(path, None, "no such run file or folder")
    if marked := marked_variant_dirs(path):
        return Source(path, "archipelago", variants=marked)
    if tb := tb_runs(path):  # before inspect's: a tb summary is a .json file too
        return Source(path, "tb", read=lambda: load_tb(tb))
    if jobs := harbor_jobs(path):
        return Source(path, "harbor", read=lambda: load_harbor(path, jobs))
    if is_inspect_log(path):
        return Source(path, "inspect", read=lambda: load_inspect(path))
    return Source(path, "archipelago", variants=variant_dirs(path, LAYOUTS))


def find_sources(paths: list[Path]) -> list[Source]:
    return [find_source(Path(path)) for path in paths]


def load_source(path: Path) -> RecordedRuns:
    """The runs under one path, read by the loader of its format."""
    runs = RecordedRuns()
    for batch in find_source(path).batches():
        runs.extend(batch)
    return runs


def load_sources(paths: list[Path]) -> RecordedRuns:
    """Runs from every path, with each task as its variants share it."""
    combined = RecordedRuns()
    for source in find_sources(paths):
        for batch in source.batches():
            combined.extend(batch)
    combined.share_tasks()
    return combined
