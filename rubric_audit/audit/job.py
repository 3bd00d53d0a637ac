"""The main job and the import: load, validate, store, summarise, write outputs.

An offline audit whose inputs are those of the one stored in OUT is that audit, its reports
checked (`placed`) and nothing else: this module imports only what that needs, and the stages
(`stages`: the checks, numpy, the model libraries) where something changed.

Everything that can refuse input runs before anything is written, so bad input leaves no partial
output. A new OUT is built in a hidden sibling folder and renamed into place; an existing OUT keeps
its audit.db (reviews included) and has its files replaced atomically.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from rubric_audit.audit.freshness import Freshness
from rubric_audit.audit.inputs import INPUTS_META
from rubric_audit.audit.placed import placed_summary
from rubric_audit.core.atomic import check_writable, make_writable_folder
from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import CALL_TIMEOUT, ModelConfig, StructuredMode, default_cache_path
from rubric_audit.load.benchmark import is_benchmark, load_benchmark, refuse_benchmark_as_output
from rubric_audit.load.sources import find_sources
from rubric_audit.report.summary import AuditSummary
from rubric_audit.store.audit_store import AuditStore, ImportSummary, open_audit

DB_NAME = "audit.db"


class AuditResult(BaseModel):
    out: str
    imported: ImportSummary
    summary: AuditSummary
    reused: bool = False  # inputs unchanged since the stored audit: only the reports were written


def import_runs(run_paths: list[Path], db: Path, bench_path: Path | None) -> ImportSummary:
    """`rubric-audit import`: add run folders to an audit.db, a batch at a time. A new audit.db
    (and the folders made for it) that an unusable run leaves without its import is removed."""
    refuse_benchmark_as_output(db.parent, "--db")
    bench = load_benchmark(bench_path) if bench_path else None
    sources = find_sources(run_paths)
    made = [folder for folder in (db.parent, *db.parent.parents) if not folder.exists()]
    make_writable_folder(db.parent)
    check_writable(db)
    new = not db.exists()
    from rubric_audit.audit.reading import Reading
    from rubric_audit.audit.stages import import_into

    try:
        with AuditStore(db) as store:
            return import_into(store, Reading(bench).batches(sources), bench)
    except BaseException:
        if new:
            db.unlink(missing_ok=True)
            for folder in made:
                folder.rmdir()
        raise


def default_runs(bench_path: Path) -> list[Path]:
    """The runs a benchmark ships in BENCH/runs/, if any."""
    shipped = bench_path / "runs"
    return [shipped] if shipped.is_dir() else []


class AuditOptions(BaseModel):
    """Model-dependent steps of the audit; each runs only when its model is given."""

    judge: str | None = None
    judge_template: Path | None = None
    lint_model: str | None = None
    near_miss_model: str | None = None
    api_base: str | None = None
    repeats: int = Field(1, ge=1)
    concurrency: int = Field(8, ge=1)
    unavailable_threshold: float = Field(0.5, ge=0, le=1)
    cache: Path | None = None
    judge_mode: StructuredMode | None = None  # None: the strictest the judge applies
    max_output_tokens: int | None = Field(None, ge=1)
    call_timeout: float = Field(CALL_TIMEOUT, gt=0)
    deadline: float | None = None  # time.monotonic(): when the model steps' time budget ends
    batch: bool = False  # the judge's calls through the provider's batch API

    def batch_ledger(self) -> Path | None:
        """Where the judge's batches are recorded until collected (beside the response cache,
        so a later audit of the same controls resumes them): None without --batch."""
        if not self.batch:
            return None
        return (self.cache or default_cache_path()).with_suffix(".batches.json")

    def models(self) -> dict[str, ModelConfig]:
        """The models given, by the option that names them (all give structured replies)."""
        return {option: ModelConfig(model=model, api_base=self.api_base,
                                    max_output_tokens=self.max_output_tokens,
                                    timeout=self.call_timeout, deadline=self.deadline,
                                    structured_mode=self.judge_mode if option == "--judge"
                                    else None)
                for option, model in (("--judge", self.judge), ("--lint-model", self.lint_model),
                                      ("--near-miss-model", self.near_miss_model)) if model}


def audit_inputs(paths: list[Path], bench: Path | None, runs: list[Path] | None
                 ) -> tuple[Path | None, list[Path] | None]:
    """The benchmark and run folders of `audit PATHS... [--bench B] [--runs R]`: a benchmark
    directory (of any layout `load_benchmark` reads) is the benchmark; the others are runs.
    None runs: the benchmark's own."""
    benches = [p for p in paths if is_benchmark(p)]
    if bench is not None:
        benches.insert(0, bench)
    if len(benches) > 1:
        raise InputError(benches[1], None, f"a second benchmark (already given {benches[0]}): "
                                           f"audit one benchmark at a time")
    run_paths = [p for p in paths if p not in benches] + list(runs or [])
    if not benches and not run_paths:
        raise InputError("audit", None, "give run folders, a benchmark (--bench), or both")
    return (benches[0] if benches else None), (run_paths or None)


def run_audit(bench_path: Path | None, run_paths: list[Path] | None, out: Path,
              options: AuditOptions | None = None) -> AuditResult:
    """The main job. Offline it does every deterministic step and lists what it skipped.

    Without a benchmark, the tasks are rebuilt from the runs, and the steps that need a world or
    a gold are listed as skipped. What did not change since the stored audit is not done again
    (`Freshness`): unchanged inputs only have their reports checked, an unchanged variant folder
    is not read, and a check runs only on what changed since it last ran.
    """
    options = options or AuditOptions()
    bench = load_benchmark(bench_path) if bench_path is not None else None
    if run_paths is not None:
        paths = run_paths
    elif bench_path is not None:
        paths = default_runs(bench_path)
    else:
        raise InputError("audit", None, "give run folders, a benchmark (--bench), or both")
    refuse_benchmark_as_output(out, "--out")
    if out.exists() and not out.is_dir():
        raise InputError(out, None, "output path exists and is not a folder")
    if out.is_dir():  # before its reports are written again from a reused audit, too
        check_writable(out)
        check_writable(out / DB_NAME)
    offline = not (options.judge or options.lint_model or options.near_miss_model)
    fresh = Freshness(bench_path, paths, out)
    inputs = fresh.inputs(options.model_dump()) if offline else None
    reused = _reuse(out, inputs)
    if reused is not None:
        return reused
    from rubric_audit.audit.stages import run_stages  # the checks, numpy: only when due

    return run_stages(bench, paths, out, options, fresh, inputs)


def _reuse(out: Path, inputs: str | None) -> AuditResult | None:
    """When OUT holds an offline audit of the same inputs, only its reports, written again if
    they do not show the store as it is (reviews written since)."""
    if inputs is None or not (out / DB_NAME).is_file():
        return None
    with AuditStore(out / DB_NAME) as store:
        stored = store.meta(INPUTS_META)
        if not stored or stored.get("fingerprint") != inputs:
            return None
        before = ImportSummary.model_validate(stored["imported"])
        imported = before.model_copy(update={
            "added_graded": 0, "added_ungraded": 0, "added_unavailable": 0,
            "unchanged": before.added + before.unchanged + before.conflicts})
        summary = placed_summary(store, out)
        if summary is None:  # the reports do not show the store (a review written since)
            from rubric_audit.audit.reports import write_reports

            summary = write_reports(store, out)
        return AuditResult(out=str(out), imported=imported, summary=summary, reused=True)


def report(out: Path) -> AuditSummary:
    """`rubric-audit report OUT`: the reports again from OUT/audit.db (reviews included)."""
    from rubric_audit.audit.reports import write_reports

    check_writable(out)
    with open_audit(out / DB_NAME) as store:
        return write_reports(store, out)
