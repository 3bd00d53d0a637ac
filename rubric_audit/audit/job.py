"""The main job and the import: load, validate, store, summarise, write outputs.

Everything that can refuse input runs before anything is written, so bad input leaves no partial
output. A new OUT is built in a hidden sibling folder and renamed into place; an existing OUT keeps
its audit.db (reviews included) and has its files replaced atomically.
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, Field

from rubric_audit.audit.background import Pending, in_background
from rubric_audit.audit.inputs import inputs_fingerprint
from rubric_audit.checks.code_grade import code_grades, code_verdicts
from rubric_audit.checks.controls import control_findings, judge_flips_on_repeats, make_controls
from rubric_audit.checks.input import (
    ATTEMPT_INPUT_CHECKS,
    RUNS_INPUT_CHECKS,
    TASK_INPUT_CHECKS,
    colliding_attempts,
    input_variants_disagree,
)
from rubric_audit.checks.items import item_findings, task_items
from rubric_audit.checks.judge_vs_code import judge_disagrees_with_code
from rubric_audit.checks.lints import TASK_CHECKS, WORLD_CHECKS
from rubric_audit.checks.model_lints import MODEL_CHECKS, model_lint
from rubric_audit.checks.precision import calibrate
from rubric_audit.checks.provenance import answer_value_unsupported
from rubric_audit.checks.regold import Regold, regold_everything
from rubric_audit.core.atomic import (
    check_writable,
    make_writable_folder,
    replacing,
    staged,
    write_atomic,
)
from rubric_audit.core.atomic import remove_stale_staging as _remove_stale_staging  # a test stands in for it
from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import (
    CALL_TIMEOUT,
    ModelConfig,
    ModelUnavailable,
    ResponseCache,
    StructuredMode,
    check_models,
    default_cache_path,
)
from rubric_audit.core.model import (
    CODE_GRADER,
    Benchmark,
    ControlGrade,
    CriterionGrade,
    Finding,
    Task,
    VariantPrompt,
    WorldContents,
)
from rubric_audit.core.scores import headline_grader, scored_graders
from rubric_audit.core.words import plural
from rubric_audit.grade.control_runs import code_controls, judge_controls, model_controls
from rubric_audit.grade.judge import load_template
from rubric_audit.load.benchmark import is_benchmark, load_benchmark, refuse_benchmark_as_output
from rubric_audit.load.runs import RecordedRuns
from rubric_audit.load.sources import load_sources
from rubric_audit.load.variant_tasks import shared_task
from rubric_audit.load.world import load_worlds
from rubric_audit.report.document import task_page
from rubric_audit.report.html import render_html
from rubric_audit.report.markdown import render_markdown
from rubric_audit.report.site import site_pages
from rubric_audit.report.summary import AuditSummary, build_summary
from rubric_audit.store.audit_store import AuditStore, ImportSummary, open_audit

DB_NAME = "audit.db"
SITE = "site"  # the report's site: a page per task beside report.html
SITE_KEY = ".built"  # in the site: a hash of what its pages were made from
BENCHMARK_STAGE = "input:benchmark"
RUNS_STAGE = "input:runs"
VARIANTS_STAGE = "input:variants"
CODE_STAGE = "code"
LINTS_STAGE = "lints"
CONTROLS_STAGE = "controls"
MODEL_LINTS_STAGE = "model_lints"
REGOLD_STAGE = "regold"
PROVENANCE_STAGE = "provenance"
ITEMS_STAGE = "items"
INPUTS_META = "inputs"
"""Fingerprint of the last complete offline audit's inputs; any import clears it."""
REGOLD_META = "regold"
WORKBOOK_META = "regold_computed"
"""Per task with a recipe, what its workbook's formula cells compute with the task's inputs."""


class AuditResult(BaseModel):
    out: str
    imported: ImportSummary
    summary: AuditSummary
    reused: bool = False  # inputs unchanged since the stored audit: only the reports were written


def benchmark_findings(bench: Benchmark) -> list[Finding]:
    return [f for task in bench.tasks for check in TASK_INPUT_CHECKS for f in check(task, bench)]


def runs_findings(runs: RecordedRuns, bench: Benchmark) -> list[Finding]:
    grades: dict[str, list[CriterionGrade]] = {}
    for g in runs.grades:
        grades.setdefault(g.attempt_id, []).append(g)
    return [f for a in runs.attempts for check in ATTEMPT_INPUT_CHECKS
            for f in check(a, grades.get(a.id, []), bench)]


def runs_without_collisions(runs: RecordedRuns) -> RecordedRuns:
    """The runs without the attempts `input_id_collision` reports, nor their grades and
    measurements: which recording a grade of a shared id belongs to is unknown, so neither is
    stored (nothing overwrites another); an attempt read twice alike is stored once."""
    colliding = colliding_attempts(runs.attempts)
    seen: set[str] = set()
    attempts = []
    for attempt in runs.attempts:
        if attempt.id not in colliding and attempt.id not in seen:
            seen.add(attempt.id)
            attempts.append(attempt)
    return runs.model_copy(update={
        "attempts": attempts,
        "grades": [g for g in runs.grades if g.attempt_id not in colliding],
        "measurements": [m for m in runs.measurements if m.attempt_id not in colliding]})


def runs_for_benchmark(runs: RecordedRuns, bench: Benchmark) -> RecordedRuns:
    """Only attempts of the benchmark's tasks; the benchmark's own task records stand."""
    known = {a.id for a in runs.attempts if bench.task(a.task_id) is not None}
    return RecordedRuns(attempts=[a for a in runs.attempts if a.id in known],
                        grades=[g for g in runs.grades if g.attempt_id in known],
                        measurements=[m for m in runs.measurements if m.attempt_id in known],
                        metrics=runs.metrics, sources=runs.sources,
                        controls=[c for c in runs.controls if bench.task(c.task_id)],
                        control_grades=runs.control_grades)


def check_numbers_in_code(store: AuditStore) -> None:
    """The code checker on every stored attempt with an answer, and its disagreements with judges.

    Replaces the `code` grades and the `code` stage's findings.
    """
    tasks = {t.id: t for t in store.tasks()}
    judged: dict[str, list[CriterionGrade]] = {}
    for g in store.grades():
        if g.grader != CODE_GRADER:
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
        store.replace_grades(CODE_GRADER, grades)
        store.replace_findings(CODE_STAGE, list(calibrate(findings)))


def check_items(store: AuditStore) -> None:
    """Item statistics over the headline grader's verdicts, the one the review queues follow;
    replaces the stage's findings."""
    grades = store.grades()
    grader = headline_grader(scored_graders(g.grader for g in grades))
    findings = item_findings(task_items(store.tasks(), store.attempts(), grades, grader))
    with store.transaction():
        store.replace_findings(ITEMS_STAGE, list(calibrate(findings)))


def check_provenance(store: AuditStore) -> None:
    """Where each answer's numbers came from in its trajectory, or in what the task's workbook
    computes (gold recomputation, stored by `run_lints`); replaces the stage's findings."""
    attempts = {a.id: a for a in store.attempts()}
    workbooks = workbook_values(store.meta(REGOLD_META, {}) or {},
                                store.meta(WORKBOOK_META, {}) or {})
    findings = [f for attempt_id, trajectory in store.trajectories() if attempt_id in attempts
                for f in answer_value_unsupported(
                    attempts[attempt_id], trajectory,
                    workbooks.get(attempts[attempt_id].task_id, {}))]
    with store.transaction():
        store.replace_findings(PROVENANCE_STAGE, findings)


def _check_same_benchmark(store: AuditStore, bench: Benchmark) -> None:
    """One audit.db holds one benchmark, at one version: scores of two are never mixed."""
    stored = store.benchmark_name()
    if stored is not None and stored != bench.name:
        raise InputError(store.path, "benchmark", f"holds an audit of {stored!r}, not "
                                                  f"{bench.name!r}; choose another output folder")
    version = store.benchmark_version()
    if version is not None and bench.version is not None and version.sha256 != bench.version.sha256:
        raise InputError(store.path, "benchmark", f"holds an audit of version {version.sha256[:12]} "
                                                  f"of {bench.name!r}, not of version "
                                                  f"{bench.version.sha256[:12]}: scores of two "
                                                  f"versions are never mixed; choose another "
                                                  f"output folder")


def runs_of_version(runs: RecordedRuns, bench: Benchmark) -> tuple[RecordedRuns, list[Finding]]:
    """The runs without the grades they recorded for tasks a patch changed (patch.json's
    lineage): those were given under an earlier version of the task, so they count in no score
    of this one (each such task is an `input_graded_under_earlier_version` finding), and an
    attempt left without a grade is ungraded; the code checker grades the answers under this
    version's rubric, and a judge can again."""
    changed = set(bench.version.changed_tasks) if bench.version else set()
    earlier = {g.attempt_id for g in runs.grades if g.grader == "recorded"} & {
        a.id for a in runs.attempts if a.task_id in changed}
    if not earlier:
        return runs, []
    assert bench.version is not None
    grades = [g for g in runs.grades if g.attempt_id not in earlier or g.grader != "recorded"]
    still = {g.attempt_id for g in grades}
    attempts = [a.model_copy(update={"state": "ungraded"})
                if a.id in earlier and a.id not in still and a.state == "graded" else a
                for a in runs.attempts]
    per_task: dict[str, list[str]] = {}
    for a in runs.attempts:
        if a.id in earlier:
            per_task.setdefault(a.task_id, []).append(a.id)
    findings = [Finding(
        task_id=task_id, check="input_graded_under_earlier_version", severity="info",
        message=f"{plural(len(ids), 'attempt')} {'was' if len(ids) == 1 else 'were'} graded "
                f"under an earlier version of this task "
                f"(changed by a patch since version {bench.version.lineage[0][:12]}): their "
                f"recorded grades are left out of this version's scores",
        evidence={"attempts": sorted(ids), "lineage": bench.version.lineage})
        for task_id, ids in sorted(per_task.items())]
    return runs.model_copy(update={"attempts": attempts, "grades": grades}), findings


def import_into(store: AuditStore, runs: RecordedRuns,
                bench: Benchmark | None) -> tuple[ImportSummary, list[Finding]]:
    """Add runs (and the benchmark, when given) to the store in one transaction."""
    findings = [f for check in RUNS_INPUT_CHECKS for f in check(runs.attempts)]
    runs = runs_without_collisions(runs)
    if bench is not None:
        _check_same_benchmark(store, bench)
        runs, earlier = runs_of_version(runs, bench)
        findings += runs_findings(runs, bench) + earlier
        runs = runs_for_benchmark(runs, bench)
    with store.transaction():
        store.set_meta(INPUTS_META, None)  # the store changes: the next audit checks it again
        if bench is not None:
            store.save_benchmark(bench)
            store.replace_findings(BENCHMARK_STAGE, benchmark_findings(bench))
        summary, conflicts = store.add_runs(runs)
        store.add_findings(RUNS_STAGE, findings + conflicts)
        share_run_tasks(store)
        store.add_recorded_controls(runs.controls, runs.control_grades)
    summary.sources = runs.sources
    return summary, findings + conflicts


def share_run_tasks(store: AuditStore) -> None:
    """Rebuild the tasks known only from runs over every variant stored so far (so the order of
    imports does not matter), with each variant's prompt difference and their disagreements."""
    tasks: list[Task] = []
    differences: list[VariantPrompt] = []
    findings: list[Finding] = []
    for task_id, recorded in store.run_tasks().items():
        task, own = shared_task(task_id, recorded)
        tasks.append(task)
        differences += own
        findings += input_variants_disagree(task, recorded, own)
    store.replace_run_tasks(tasks, differences)
    store.replace_findings(VARIANTS_STAGE, findings)


def import_runs(run_paths: list[Path], db: Path, bench_path: Path | None) -> ImportSummary:
    """`rubric-audit import`: add run folders to an audit.db."""
    refuse_benchmark_as_output(db.parent, "--db")
    bench = load_benchmark(bench_path) if bench_path else None
    runs = load_sources(run_paths)
    make_writable_folder(db.parent)
    check_writable(db)
    with AuditStore(db) as store:
        summary, _ = import_into(store, runs, bench)
    return summary


@contextmanager
def _output_folder(out: Path) -> Iterator[Path]:
    """Where to write: OUT itself if it exists, else a hidden sibling renamed to OUT on success
    (`staged`: the staging folders of a killed run are recognised and removed by the next one).
    """
    if out.is_dir():
        yield out
        return
    make_writable_folder(out.parent)
    _remove_stale_staging(out)
    with staged(out, "another audit wrote this folder first (while this one ran); run again to "
                     "update it") as staging:
        yield staging


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


class SkippedStep(BaseModel):
    step: str
    enable_with: str
    needs: str = "a model"


def without_world_files(bench: Benchmark) -> list[Task]:
    """The tasks whose world's shared files the benchmark does not hold (an unknown world, an
    APEX world without its zip, a task package as published): the checks that read a world skip
    them, since what they would miss there is no finding."""
    return [t for t in bench.tasks if (w := bench.world(t.world_id)) is None or w.source is None]


def skipped_steps(options: AuditOptions, with_benchmark: bool = True,
                  worldless: list[Task] | None = None) -> list[SkippedStep]:
    """The checks this audit did not run (needing a model, or the benchmark's worlds and golds),
    and the option that runs each; `worldless` are the benchmark's tasks without world files."""
    steps = []
    if worldless:  # the input_* findings name the worlds (stranger text stays out of steps)
        steps.append(SkippedStep(
            step=f"checks that read the task's world ("
                 f"{', '.join(c.__name__ for c in WORLD_CHECKS)}"
                 f"{', model-assisted checks' if options.lint_model else ''}) on "
                 f"{len(worldless)} tasks, whose world's files are not in the benchmark",
            enable_with="the world's files in the benchmark (a task package: run its "
                        "download_data.sh)",
            needs="the world's files"))
    if not with_benchmark:
        steps += [
            SkippedStep(step="static checks that read the task's world: "
                             + ", ".join(c.__name__ for c in WORLD_CHECKS),
                        enable_with="--bench BENCH", needs="the benchmark's worlds"),
            SkippedStep(step="gold recomputation from the task's workbook (BENCH/regold/)",
                        enable_with="--bench BENCH", needs="the benchmark's worlds"),
            SkippedStep(step="gold controls, near misses and alternatives (the runs carry no "
                             "gold)", enable_with="--bench BENCH", needs="the benchmark's golds"),
        ]
        if options.lint_model is not None:
            steps.append(SkippedStep(step="model-assisted checks: " + ", ".join(MODEL_CHECKS),
                                     enable_with="--bench BENCH", needs="the benchmark's worlds"))
    if options.judge is None:
        steps.append(SkippedStep(step="judge-graded controls (gold, null, near misses, "
                                      "alternatives; --repeats for judge flip rates)",
                                 enable_with="--judge MODEL"))
    if options.lint_model is None:
        steps.append(SkippedStep(step="model-assisted checks: " + ", ".join(MODEL_CHECKS),
                                 enable_with="--lint-model MODEL"))
    if options.near_miss_model is None:
        steps.append(SkippedStep(step="model-written near misses and adversarial answers",
                                 enable_with="--near-miss-model MODEL"))
    return steps


def workbook_values(recomputed: dict[str, list[dict[str, Any]]], computed: dict[str, dict[str, float]]
                    ) -> dict[str, dict[str, float]]:
    """Per task, the values its recomputed workbook gives, by what gives them: the recipe's
    expressions for its criteria, then every formula cell."""
    return {task_id: {row["label"]: row["value"] for row in recomputed.get(task_id, [])}
            | computed.get(task_id, {}) for task_id in recomputed.keys() | computed.keys()}


def run_lints(store: AuditStore, bench: Benchmark, worlds: dict[str, WorldContents],
              regold: Pending[Regold] | None = None) -> None:
    """The static task checks, and gold recomputation where recipes exist; replaces both stages.

    Tasks known only from runs have no world: the checks that read one skip them, and gold
    recomputation runs only on a benchmark read from disk (`regold`, if it was started earlier).
    """
    worldless = {t.id for t in without_world_files(bench)}
    findings = [f for task in bench.tasks for check in TASK_CHECKS
                if (task.source == "benchmark" and task.id not in worldless)
                or check not in WORLD_CHECKS
                for f in check(task, worlds.get(task.id, WorldContents()))]
    recomputed = (regold.result() if regold is not None
                  else regold_everything(bench) if bench.root else Regold({}, [], {}))
    with store.transaction():
        store.replace_findings(LINTS_STAGE, list(calibrate(findings)))
        store.replace_findings(REGOLD_STAGE, recomputed.findings)
        store.set_meta(REGOLD_META, {task_id: [r.model_dump() for r in rows]
                                     for task_id, rows in recomputed.recomputed.items()})
        store.set_meta(WORKBOOK_META, recomputed.computed)


async def run_model_steps(store: AuditStore, bench: Benchmark,
                          worlds: dict[str, WorldContents], options: AuditOptions,
                          models: dict[str, ModelConfig] | None = None) -> list[str]:
    """Controls graded in code and (if given) by the judge; model lints; model near misses.
    `models`: the checked configs by option (`check_models`), else `options.models()`.

    Returns the provider failures met (their checks are missing, not failed).
    """
    models = models if models is not None else options.models()
    uses_models = options.judge or options.lint_model or options.near_miss_model
    cache = ResponseCache(options.cache or default_cache_path()) if uses_models else None
    tasks = {t.id: t for t in bench.tasks}
    controls = [c for task in bench.tasks for c in make_controls(task)]
    failures: list[str] = []
    if options.near_miss_model:
        written, missed = await model_controls(models["--near-miss-model"],
                                               bench.tasks, cache)
        controls += written
        failures += missed
    judged: list[ControlGrade] = []
    if options.judge:
        judged, missed = await judge_controls(
            models["--judge"], load_template(options.judge_template), tasks,
            controls, cache, options.repeats, options.concurrency, options.batch_ledger())
        failures += missed
    model_findings: list[Finding] = []
    if options.lint_model and bench.root:
        config = models["--lint-model"]
        worldless = {t.id for t in without_world_files(bench)}
        for task in (t for t in bench.tasks if t.id not in worldless):
            for check in MODEL_CHECKS:
                try:
                    model_findings += await model_lint(check, task, worlds[task.id], config,
                                                       cache)
                except ModelUnavailable as exc:
                    failures.append(exc.reason)
    with store.transaction():
        store.replace_controls(controls)
        store.replace_control_grades(CODE_GRADER, code_controls(tasks, controls))
        if options.judge:
            store.replace_control_grades(f"judge:{options.judge}", judged)
        if options.lint_model and bench.root:
            store.replace_findings(MODEL_LINTS_STAGE, model_findings)
        store.replace_findings(CONTROLS_STAGE, list(calibrate(_control_findings(tasks, store))))
    return failures


def _control_findings(tasks: dict[str, Task], store: AuditStore) -> list[Finding]:
    """Broken expectations of the current controls, and judges that flip between repeats."""
    controls = {c.id: c for c in store.controls()}
    per_task: dict[str, dict[str, list[CriterionGrade]]] = {}
    all_grades = store.control_grades()
    for g in all_grades:
        control = controls.get(g.grade.attempt_id)
        if control is not None and g.task_version == control.task_version:
            per_task.setdefault(control.task_id, {}).setdefault(control.id, []).append(g.grade)
    findings = [f for task_id, graded in sorted(per_task.items())
                for f in control_findings(tasks[task_id], [(controls[cid], grades)
                                                            for cid, grades in graded.items()])]
    findings += judge_flips_on_repeats(tasks, all_grades)
    return findings


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
    a gold are listed as skipped.
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
    inputs = inputs_fingerprint([p for p in [bench_path, *paths] if p is not None],
                                options.model_dump(), out) if offline else None
    reused = _reuse(out, inputs)
    if reused is not None:
        return reused
    # Gold recomputation needs only the benchmark: it runs beside the reading of the runs.
    # scipy.stats (about a second to import) serves both the workbook engine there and the
    # report's intervals here: imported before the fork, it is imported once, not in each.
    background = bench is not None and bench.root
    if background:
        importlib.import_module("scipy.stats")
    with in_background(regold_everything, bench) if background else nullcontext() as regold:
        return _audit(bench, paths, out, options, inputs, regold)


def _audit(bench: Benchmark | None, paths: list[Path], out: Path, options: AuditOptions,
           inputs: str | None, regold: Pending[Regold] | None) -> AuditResult:
    runs = load_sources(paths) if paths else RecordedRuns()
    worlds = load_worlds(bench) if bench is not None else {}
    given = options.models()
    models = check_models(given, structured=set(given))
    with _output_folder(out) as folder, AuditStore(folder / DB_NAME) as store, \
            _site_replaced(folder) as site:
        with store.transaction():  # one commit: a failure leaves the previous audit as it was
            imported, _ = import_into(store, runs, bench)
            check_numbers_in_code(store)
            check_items(store)
            audited = bench or Benchmark(name="recorded runs", root="", tasks=store.tasks(),
                                         worlds=[])
            run_lints(store, audited, worlds, regold)
            check_provenance(store)  # reads the workbooks recomputed by run_lints
            failures = anyio.run(run_model_steps, store, audited, worlds, options, models)
            store.set_meta("audit", {
                "unavailable_threshold": options.unavailable_threshold,
                "skipped": [s.model_dump() for s in skipped_steps(
                    options, bench is not None, without_world_files(bench) if bench else [])],
                "model_failures": sorted(set(failures)),
                "models_used": [m for m in (options.judge, options.lint_model,
                                            options.near_miss_model) if m]})
            store.set_meta(INPUTS_META, {"fingerprint": inputs, "imported": imported.model_dump()}
                           if inputs and not failures else None)
            # read inside the transaction: a stored row that cannot be read (a review with a
            # label this tool does not know) undoes the whole audit, not only the reports
            summary, files = rendered_reports(store)
            _write_site(store, summary, site, _site_key(store, files))
        _write_files(folder, files)
    return AuditResult(out=str(out), imported=imported, summary=summary)


def _reuse(out: Path, inputs: str | None) -> AuditResult | None:
    """When OUT holds an offline audit of the same inputs, only its reports, written again."""
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
        return AuditResult(out=str(out), imported=imported, summary=write_reports(store, out),
                           reused=True)


def rendered_reports(store: AuditStore) -> tuple[AuditSummary, dict[str, str]]:
    """findings.jsonl, audit.json, report.md and report.html (name -> text) from what the store
    holds, all read before any is written: a row that cannot be read writes none of them."""
    settings = store.meta("audit", {})
    summary = build_summary(store, settings.get("unavailable_threshold", 0.5),
                            [SkippedStep(**s) for s in settings.get("skipped", [])],
                            settings.get("model_failures", []), settings.get("models_used", []))
    findings = store.findings()
    tasks = {t.id: t for t in store.tasks()}
    return summary, {
        "findings.jsonl": "".join(f.model_dump_json() + "\n" for f in findings),
        "audit.json": json.dumps(summary.model_dump(), indent=2) + "\n",
        "report.md": render_markdown(summary, findings, tasks),
        "report.html": render_html(summary, findings, tasks)}


def write_reports(store: AuditStore, folder: Path) -> AuditSummary:
    """The reports of `rendered_reports`, then the site, written into `folder`; the site's
    pages only when something they show changed since they were made (`_site_key`), or a page
    is missing or one too many."""
    summary, files = rendered_reports(store)
    key = _site_key(store, files)
    built = folder / SITE / SITE_KEY
    pages = {task_page(t, name) for t, name in summary.task_names.items()}
    if (key is not None and not built.parent.is_symlink() and built.is_file()
            and built.read_text(encoding="utf-8") == key
            and {p.relative_to(folder).as_posix() for p in built.parent.rglob("*.html")} == pages):
        _write_files(folder, files)
        return summary
    with _site_replaced(folder) as site:
        _write_site(store, summary, site, key)
        _write_files(folder, files)
    return summary


def _site_key(store: AuditStore, files: dict[str, str]) -> str | None:
    """What the site's pages are made from, as a hash: an offline audit's inputs (their
    fingerprint holds rubric-audit's own code) and what the reports say of them (outcomes,
    findings, reviewers' labels and notes). None for an audit without a fingerprint (one that
    called a model): its pages are always made again."""
    stored = store.meta(INPUTS_META)
    if not stored or not stored.get("fingerprint"):
        return None
    return hashlib.sha256("\0".join([stored["fingerprint"], files["audit.json"],
                                      files["findings.jsonl"]]).encode()).hexdigest()


@contextmanager
def _site_replaced(folder: Path) -> Iterator[Path]:
    """A hidden folder to build the site in, put in place of `folder/site` when the block ends
    without an exception (after the reports are written), removed when it does not. A `site`
    that is not a folder of ours (a file, a symbolic link) is refused before anything is
    written."""
    target = folder / SITE
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InputError(target, None, "is not the site folder rubric-audit writes (a file or "
                                       "a symbolic link): move it away")
    _remove_stale_staging(target)
    with replacing(target) as site:
        yield site


def _write_site(store: AuditStore, summary: AuditSummary, site: Path, key: str | None) -> None:
    """Every page of the site (report/site.py), written into the staging folder `site`, and
    the key of what they were made from (`_site_key`), last."""
    for path, page in site_pages(store, summary, store.findings()):
        target = site.joinpath(*path.split("/")[1:])  # paths start with site/
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    if key is not None:
        (site / SITE_KEY).write_text(key, encoding="utf-8")


def _write_files(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        write_atomic(folder / name, text)


def report(out: Path) -> AuditSummary:
    """`rubric-audit report OUT`: the reports again from OUT/audit.db (reviews included)."""
    check_writable(out)
    with open_audit(out / DB_NAME) as store:
        return write_reports(store, out)
