"""The main job and the import: load, validate, store, summarise, write outputs.

Everything that can refuse input runs before anything is written, so bad input leaves no partial
output. A new OUT is built in a hidden sibling folder and renamed into place; an existing OUT keeps
its audit.db (reviews included) and has its files replaced atomically.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from rubric_audit.checks.code_grade import code_grades, code_verdicts, judge_disagrees_with_code
from rubric_audit.checks.input import ATTEMPT_INPUT_CHECKS, TASK_INPUT_CHECKS
from rubric_audit.errors import InputError
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import RecordedRuns, load_runs
from rubric_audit.model import Benchmark, CriterionGrade, Finding
from rubric_audit.report.markdown import render_markdown
from rubric_audit.report.summary import AuditSummary, build_summary
from rubric_audit.store import AuditStore, ImportSummary

DB_NAME = "audit.db"
BENCHMARK_STAGE = "input:benchmark"
RUNS_STAGE = "input:runs"
CODE_STAGE = "code"


class AuditResult(BaseModel):
    out: str
    imported: ImportSummary
    summary: AuditSummary


def benchmark_findings(bench: Benchmark) -> list[Finding]:
    return [f for task in bench.tasks for check in TASK_INPUT_CHECKS for f in check(task, bench)]


def runs_findings(runs: RecordedRuns, bench: Benchmark) -> list[Finding]:
    grades: dict[str, list[CriterionGrade]] = {}
    for g in runs.grades:
        grades.setdefault(g.attempt_id, []).append(g)
    return [f for a in runs.attempts for check in ATTEMPT_INPUT_CHECKS
            for f in check(a, grades.get(a.id, []), bench)]


def runs_for_benchmark(runs: RecordedRuns, bench: Benchmark) -> RecordedRuns:
    """Only attempts of the benchmark's tasks; the benchmark's own task records stand."""
    known = {a.id for a in runs.attempts if bench.task(a.task_id) is not None}
    return RecordedRuns(attempts=[a for a in runs.attempts if a.id in known],
                        grades=[g for g in runs.grades if g.attempt_id in known])


def check_numbers_in_code(store: AuditStore) -> None:
    """The code checker on every stored attempt with an answer, and its disagreements with judges.

    Replaces the `code` grades and the `code` stage's findings.
    """
    tasks = {t.id: t for t in store.tasks()}
    judged: dict[str, list[CriterionGrade]] = {}
    for g in store.grades():
        if g.grader != "code":
            judged.setdefault(g.attempt_id, []).append(g)
    grades: list[CriterionGrade] = []
    findings: list[Finding] = []
    for attempt in store.attempts():
        task = tasks.get(attempt.task_id)
        if task is None:
            continue
        verdicts = code_verdicts(task, attempt)
        grades += code_grades(attempt, verdicts)
        findings += judge_disagrees_with_code(task, attempt, judged.get(attempt.id, []), verdicts)
    with store.transaction():
        store.replace_grades("code", grades)
        store.replace_findings(CODE_STAGE, findings)


def _check_same_benchmark(store: AuditStore, bench: Benchmark) -> None:
    stored = store.benchmark_name()
    if stored is not None and stored != bench.name:
        raise InputError(store.path, "benchmark", f"holds an audit of {stored!r}, not "
                                                  f"{bench.name!r}; choose another output folder")


def import_into(store: AuditStore, runs: RecordedRuns,
                bench: Benchmark | None) -> tuple[ImportSummary, list[Finding]]:
    """Add runs (and the benchmark, when given) to the store in one transaction."""
    findings: list[Finding] = []
    if bench is not None:
        _check_same_benchmark(store, bench)
        findings = runs_findings(runs, bench)
        runs = runs_for_benchmark(runs, bench)
    with store.transaction():
        if bench is not None:
            store.save_benchmark(bench)
            store.replace_findings(BENCHMARK_STAGE, benchmark_findings(bench))
        summary, conflicts = store.add_runs(runs)
        store.add_findings(RUNS_STAGE, findings + conflicts)
    return summary, findings + conflicts


def import_runs(run_paths: list[Path], db: Path, bench_path: Path | None) -> ImportSummary:
    """`rubric-audit import`: add run folders to an audit.db."""
    bench = load_benchmark(bench_path) if bench_path else None
    runs = load_runs(run_paths)
    db.parent.mkdir(parents=True, exist_ok=True)
    with AuditStore(db) as store:
        summary, _ = import_into(store, runs, bench)
    return summary


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


@contextmanager
def _output_folder(out: Path) -> Iterator[Path]:
    """Where to write: OUT itself if it exists, else a hidden sibling renamed to OUT on success."""
    if out.is_dir():
        yield out
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield staging
        staging.rename(out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def default_runs(bench_path: Path) -> list[Path]:
    """The runs a benchmark ships in BENCH/runs/, if any."""
    shipped = bench_path / "runs"
    return [shipped] if shipped.is_dir() else []


def run_audit(bench_path: Path, run_paths: list[Path] | None, out: Path) -> AuditResult:
    """The main job: everything deterministic, no model called."""
    bench = load_benchmark(bench_path)
    paths = default_runs(bench_path) if run_paths is None else run_paths
    runs = load_runs(paths) if paths else RecordedRuns()
    if out.exists() and not out.is_dir():
        raise InputError(out, None, "output path exists and is not a folder")
    with _output_folder(out) as folder:
        with AuditStore(folder / DB_NAME) as store:
            imported, _ = import_into(store, runs, bench)
            check_numbers_in_code(store)
            summary = build_summary(store)
            findings = store.findings()
        _write_atomic(folder / "findings.jsonl",
                      "".join(f.model_dump_json() + "\n" for f in findings))
        _write_atomic(folder / "audit.json", json.dumps(summary.model_dump(), indent=2) + "\n")
        _write_atomic(folder / "report.md", render_markdown(summary, findings))
    return AuditResult(out=str(out), imported=imported, summary=summary)
