"""The audit's stages, each done where its inputs changed: the import of runs, the checks per
attempt, the lints and gold recomputation, the item statistics, the controls and model steps,
and the reports they end in (`run_stages`). `job` asks for them only when the stored audit cannot
be reused, so an audit of unchanged inputs imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Literal

import anyio

from rubric_audit.audit.background import Pending, in_background, in_order
from rubric_audit.audit.freshness import STAGES_META, Freshness
from rubric_audit.audit.inputs import INPUTS_META
from rubric_audit.audit.job import DB_NAME, AuditOptions, AuditResult
from rubric_audit.audit.reading import (
    ReadBatch,
    Reading,
    attempt_findings,
    earlier_version_findings,
)
from rubric_audit.audit.reports import Reports, SkippedStep, build_reports, check_site, record
from rubric_audit.checks.code_grade import code_grades, code_verdicts
from rubric_audit.checks.controls import control_findings, judge_flips_on_repeats, make_controls
from rubric_audit.checks.input import (
    TASK_INPUT_CHECKS,
    input_id_collision,
    input_variants_disagree,
)
from rubric_audit.checks.items import item_findings, task_items
from rubric_audit.checks.judge_vs_code import judge_disagrees_with_code
from rubric_audit.checks.lints import TASK_CHECKS, WORLD_CHECKS
from rubric_audit.checks.model_lints import MODEL_CHECKS, model_lint
from rubric_audit.checks.precision import calibrate, load_unseen
from rubric_audit.checks.precision import load as load_precision
from rubric_audit.checks.provenance import answer_value_unsupported
from rubric_audit.checks.regold import Regold, regold_everything
from rubric_audit.core.atomic import make_writable_folder, staged
from rubric_audit.core.atomic import remove_stale_staging as _remove_stale_staging  # a test stands in for it
from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import (
    ModelConfig,
    ModelUnavailable,
    ResponseCache,
    check_models,
    default_cache_path,
)
from rubric_audit.core.model import (
    CODE_GRADER,
    Benchmark,
    Control,
    ControlGrade,
    CriterionGrade,
    Finding,
    SourceSummary,
    Task,
    VariantPrompt,
    WorldContents,
)
from rubric_audit.core.scores import headline_grader, scored_graders
from rubric_audit.grade.control_runs import code_controls, judge_controls, model_controls
from rubric_audit.grade.judge import load_template
from rubric_audit.load.runs import RecordedRuns
from rubric_audit.load.sources import Source, find_sources
from rubric_audit.load.variant_tasks import shared_task
from rubric_audit.load.world import load_worlds
from rubric_audit.store.audit_store import (
    AttemptChecks,
    AttemptToCheckRow,
    AuditStore,
    ImportSummary,
    SourceRecord,
)
from rubric_audit.store.run_import import RunsImport, SourceCounts

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
REGOLD_META = "regold"
WORKBOOK_META = "regold_computed"
"""Per task with a recipe, what its workbook's formula cells compute with the task's inputs."""
Scope = Literal["all", "unchecked"] | None


def benchmark_findings(bench: Benchmark) -> list[Finding]:
    return [f for task in bench.tasks for check in TASK_INPUT_CHECKS for f in check(task, bench)]


def runs_findings(runs: RecordedRuns, bench: Benchmark) -> list[Finding]:
    """The input findings of every attempt read."""
    return [f for found in attempt_findings(runs, bench).values() for f in found]


def id_collisions(staged: RunsImport) -> list[Finding]:
    """`input_id_collision` of every attempt id read for more than one recording."""
    return [f for attempt_id, group in staged.collisions()
            for f in input_id_collision(attempt_id, group)]


def check_attempts(store: AuditStore, code: Scope, provenance: Scope) -> None:
    """The checks of each attempt, a task at a time from the store (spread over worker processes
    where there are cores to spare): the code checker (its `code` grades, and its disagreements
    with judges) and answer provenance (which reads the workbooks recomputed by `run_lints`).
    Each runs on every attempt ("all": the stage's findings are replaced), on the attempts added
    or changed since they were checked ("unchecked"), or not at all (None)."""
    if code is None and provenance is None:
        return
    workbooks = workbook_values(store.meta(REGOLD_META, {}) or {},
                                store.meta(WORKBOOK_META, {}) or {})
    measured, unseen = load_precision(), load_unseen()
    store.clear_attempt_checks(CODE_STAGE if code == "all" else None,
                               PROVENANCE_STAGE if provenance == "all" else None)
    everything = "all" in (code, provenance)

    def check(item: tuple[Task, list[AttemptToCheckRow]]) -> list[AttemptChecks]:
        task, rows = item
        checked = []
        for attempt, trajectory, judged, due in map(store.to_check, rows):
            results = AttemptChecks(attempt.id)
            if code == "all" or (code == "unchecked" and due):
                verdicts = code_verdicts(task, attempt)
                results.code_grades = code_grades(attempt, verdicts)
                results.code_findings = list(calibrate(judge_disagrees_with_code(
                    task, attempt, judged, verdicts), measured, unseen))
            if provenance == "all" or (provenance == "unchecked" and due):
                results.provenance_findings = list(answer_value_unsupported(
                    attempt, trajectory, workbooks.get(task.id, {}))) if trajectory else []
            checked.append(results)
        return checked

    tasks = ((task, store.attempt_rows_to_check(task.id, unchecked_only=not everything,
                                                with_trajectories=provenance is not None))
             for task in store.tasks_with_attempts(unchecked_only=not everything))
    for checked in in_order(check, tasks):
        for results in checked:
            store.replace_attempt_checks(results, CODE_STAGE if code else None,
                                         PROVENANCE_STAGE if provenance else None)


def check_numbers_in_code(store: AuditStore) -> None:
    """The code checker on every stored attempt with an answer, and its disagreements with judges.

    Replaces the `code` grades and the `code` stage's findings.
    """
    with store.transaction():
        check_attempts(store, "all", None)


def check_items(store: AuditStore) -> None:
    """Item statistics over the headline grader's verdicts, the one the review queues follow,
    from the attempts and grades as their rows' columns give them; replaces the stage's
    findings. They read every attempt's verdicts, so an audit that does anything again runs
    them."""
    attempts = store.attempt_lines()
    grader = headline_grader(scored_graders(store.graders()))
    findings = item_findings(task_items(store.tasks(), attempts, store.grade_lines(attempts),
                                        grader))
    with store.transaction():
        store.replace_findings(ITEMS_STAGE, list(calibrate(findings)))


def check_provenance(store: AuditStore) -> None:
    """Where each answer's numbers came from in its trajectory, or in what the task's workbook
    computes (gold recomputation, stored by `run_lints`); replaces the stage's findings."""
    with store.transaction():
        check_attempts(store, None, "all")


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


def import_into(store: AuditStore, runs: RecordedRuns | Iterable[ReadBatch],
                bench: Benchmark | None, unread: Iterable[SourceRecord] = (),
                keys: dict[str, str] | None = None) -> ImportSummary:
    """Add runs (and the benchmark, when given) to the store in one transaction: one
    `RecordedRuns`, or a stream of batches as `Reading` reads them (a source's summary in the
    last batch of the source).

    `unread` are the sources not read again, unchanged since they were imported (their attempts
    are counted as unchanged); `keys` the fingerprint of each source read, by its path, stored
    with what it gave so that a later import can pass it over.
    """
    batches = [Reading(bench).prepared(runs)] if isinstance(runs, RecordedRuns) else runs
    if bench is not None:
        _check_same_benchmark(store, bench)
    with store.transaction():
        store.set_meta(INPUTS_META, None)  # the store changes: the next audit checks it again
        if bench is not None:
            store.save_benchmark(bench)
            store.replace_findings(BENCHMARK_STAGE, benchmark_findings(bench))
        staged = RunsImport(store, RUNS_STAGE)
        controls: list[Control] = []
        control_grades: list[CriterionGrade] = []
        sources: list[list[SourceSummary]] = [[]]
        earlier: dict[str, list[str]] = {}  # task -> attempts graded under an earlier version
        tasks_recorded = False
        for batch in batches:
            staged.add(len(sources) - 1, batch.rows)
            for task_id, ids in batch.earlier.items():
                earlier.setdefault(task_id, []).extend(ids)
            store.save_source_metrics(batch.metrics)
            if bench is None:  # a benchmark's own tasks stand
                tasks_recorded |= store.add_run_tasks(batch.recorded)
            controls += batch.controls
            control_grades += batch.control_grades
            if batch.sources:
                sources[-1] += batch.sources
                sources.append([])
        store.add_findings(RUNS_STAGE, id_collisions(staged) + (
            earlier_version_findings(earlier, bench) if bench is not None else []))
        summary, per_source = staged.merge()
        if tasks_recorded:
            share_run_tasks(store)
        store.add_recorded_controls(controls, control_grades)
        for n, read in enumerate(sources):
            counts = per_source.get(n, SourceCounts())
            if len(read) == 1 and keys and read[0].path in keys:
                store.save_source(SourceRecord(key=keys[read[0].path], summary=read[0],
                                               stored=counts.stored, conflicts=counts.conflicts))
        for record in unread:
            summary.unchanged += record.stored
            summary.conflicts += record.conflicts
    summary.sources = [s for read in sources for s in read] + [r.summary for r in unread]
    return summary


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


def run_stages(bench: Benchmark | None, paths: list[Path], out: Path, options: AuditOptions,
               fresh: Freshness, inputs: str | None) -> AuditResult:
    """Every stage whose inputs changed since the audit stored in OUT (all of them for a new
    one), then the reports."""
    sources = find_sources(paths)
    stored = _stored_stages(out)
    lints_due = stored.get(LINTS_STAGE) != fresh.lints_key(bench)
    # Gold recomputation needs only the benchmark: it runs beside the reading of the runs.
    # scipy.stats (about a second to import) serves both the workbook engine there and the
    # report's intervals here: imported before the fork, it is imported once, not in each.
    background = bench is not None and bench.root and lints_due
    if background:
        importlib.import_module("scipy.stats")
    with in_background(regold_everything, bench) if background else nullcontext() as regold:
        return _audit(bench, sources, out, options, fresh, inputs, regold)


def _stored_stages(out: Path) -> dict[str, str]:
    """The key each stage of the audit stored in OUT last ran on ({} for a new audit)."""
    if not (out / DB_NAME).is_file():
        return {}
    with AuditStore(out / DB_NAME) as store:
        stages = store.meta(STAGES_META, {})
        return stages if isinstance(stages, dict) else {}


def _audit(bench: Benchmark | None, sources: list[Source], out: Path, options: AuditOptions,
           fresh: Freshness, inputs: str | None, regold: Pending[Regold] | None) -> AuditResult:
    given = options.models()
    models = check_models(given, structured=set(given))
    with _output_folder(out) as folder, AuditStore(folder / DB_NAME) as store:
        check_site(folder)  # before any work
        reports: Reports | None = None
        try:
            with store.transaction():  # one commit: a failure leaves the previous audit as it was
                imported = _stages(store, bench, sources, options, fresh, inputs, regold,
                                   models)
                # read inside the transaction: a stored row that cannot be read (a review with a
                # label this tool does not know) undoes the whole audit, not only the reports
                reports = build_reports(store, folder)
                record(store, reports)
            reports.place(folder)
        finally:
            if reports is not None:
                reports.discard()
    return AuditResult(out=str(out), imported=imported, summary=reports.summary)


def _stages(store: AuditStore, bench: Benchmark | None, sources: list[Source],
            options: AuditOptions, fresh: Freshness, inputs: str | None,
            regold: Pending[Regold] | None, models: dict[str, ModelConfig]
            ) -> ImportSummary:
    """Every stage of the audit, each where its inputs changed since it last ran; what the
    import did."""
    stages = store.meta(STAGES_META, {}) or {}
    unread, keys = fresh.unread_sources(store, sources, bench)
    imported = import_into(store, Reading(bench).batches(sources, frozenset(unread)), bench,
                           list(unread.values()), keys)
    if unread:  # said in the order the variant folders were given, read or not
        order = {str(v): n for n, v in enumerate(v for s in sources for v in s.variants)}
        imported.sources.sort(key=lambda s: order.get(s.path, len(order)))
    audited = bench or Benchmark(name="recorded runs", root="", tasks=store.tasks(), worlds=[])
    due = {LINTS_STAGE: fresh.lints_key(bench) or fresh.tasks_key(store)}
    lints = stages.get(LINTS_STAGE) != due[LINTS_STAGE]
    worlds = load_worlds(bench) if bench is not None and (lints or options.lint_model) else {}
    if lints:
        run_lints(store, audited, worlds, regold)
    due[CODE_STAGE] = fresh.tasks_key(store)
    due[PROVENANCE_STAGE] = fresh.workbooks_key(store, due[CODE_STAGE])
    check_attempts(store, *("all" if stages.get(stage) != due[stage] else "unchecked"
                            for stage in (CODE_STAGE, PROVENANCE_STAGE)))
    store.clear_unchecked()
    check_items(store)
    failures: list[str] = []
    due[CONTROLS_STAGE] = fresh.controls_key(store) if not models else ""
    if models or stages.get(CONTROLS_STAGE) != due[CONTROLS_STAGE]:
        failures = anyio.run(run_model_steps, store, audited, worlds, options, models)
    store.set_meta(STAGES_META, due)
    store.set_meta("audit", {
        "unavailable_threshold": options.unavailable_threshold,
        "skipped": [s.model_dump() for s in skipped_steps(
            options, bench is not None, without_world_files(bench) if bench else [])],
        "model_failures": sorted(set(failures)),
        "models_used": [m for m in (options.judge, options.lint_model,
                                    options.near_miss_model) if m]})
    store.set_meta(INPUTS_META, {"fingerprint": inputs, "imported": imported.model_dump()}
                   if inputs and not failures else None)
    return imported
