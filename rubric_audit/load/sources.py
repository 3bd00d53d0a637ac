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
"""

from __future__ import annotations

from pathlib import Path

from rubric_audit.core.errors import InputError
from rubric_audit.load.harbor import harbor_jobs, load_harbor
from rubric_audit.load.inspect_log import is_inspect_log, load_inspect
from rubric_audit.load.runs import RecordedRuns, load_variant, variant_dirs
from rubric_audit.load.tb import load_tb, tb_runs

LAYOUTS = ("an Archipelago variant folder (results.csv, results.failures.jsonl or task folders "
           "of attempt files) or a folder of them; a Harbor trial, job or folder of jobs (trial "
           "folders with result.json or config.json); an inspect_ai log (.eval or .json) or a "
           "folder of logs; or Terminal-Bench 1 `tb run` output (results.json)")


def load_source(path: Path) -> RecordedRuns:
    """The runs under one path, read by the loader of its format; a path that holds none of the
    layouts read is refused with every one of them named."""
    if not path.exists():
        raise InputError(path, None, "no such run file or folder")
    if tb := tb_runs(path):  # before inspect's: a tb summary is a .json file too
        return load_tb(tb)
    if jobs := harbor_jobs(path):
        return load_harbor(path, jobs)
    if is_inspect_log(path):
        return load_inspect(path)
    runs = RecordedRuns()
    for variant_dir in variant_dirs(path, LAYOUTS):
        runs.extend(load_variant(variant_dir))
    return runs


def load_sources(paths: list[Path]) -> RecordedRuns:
    """Runs from every path, with each task as its variants share it."""
    combined = RecordedRuns()
    for path in paths:
        combined.extend(load_source(Path(path)))
    combined.share_tasks()
    return combined
