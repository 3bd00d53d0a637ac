"""`patch` and `defects` end to end: from an audit's store to proposals, a verified benchmark
folder, or defect packets.

The benchmark patched is the one the audit read, at the version it read (its sha256 stored in
audit.db): a benchmark changed since is refused, so proposals always rest on what was audited. A
new benchmark is written whole into a hidden sibling folder, read back through the loader,
verified, and only then renamed into place: a refused patch leaves nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
from pydantic import BaseModel

from rubric_audit.core.atomic import make_writable_folder, remove_stale_staging, staged, write_folder
from rubric_audit.core.errors import InputError
from rubric_audit.core.llm import ModelConfig, ResponseCache, default_cache_path
from rubric_audit.core.model import Attempt, Benchmark, Criterion, CriterionGrade, Task, Verdict
from rubric_audit.grade.judge import JudgeTemplate, grade_attempt
from rubric_audit.load.apex import TASKS_FILE, is_apex
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.lineage import PatchRecord
from rubric_audit.patch.defects import confirmed_defects
from rubric_audit.patch.edit import accepted, apply
from rubric_audit.patch.kinds import propose
from rubric_audit.patch.packets import make_packets, packet_files
from rubric_audit.patch.proposals import Proposals, read_proposals, write_proposals
from rubric_audit.patch.rewording import reword
from rubric_audit.patch.verify import (
    Verification,
    changed_criteria,
    check_controls,
    code_regrader,
    regrade,
)
from rubric_audit.patch.write import (
    changelog,
    copy_benchmark,
    patch_record,
    renumber_recipes,
    write_record,
    write_tasks,
)
from rubric_audit.store.audit_store import AuditStore, open_audit


def audited_benchmark(store: AuditStore, bench: Path | None) -> Benchmark:
    """The benchmark the audit read (or `bench`, which must hold the same version), loaded."""
    version = store.benchmark_version()
    stored = store.benchmark_root()
    root = bench if bench is not None else Path(stored) if stored else None
    if root is None or version is None:
        raise InputError(store.path, "benchmark", "no benchmark version stored (an audit of runs "
                                                  "alone, or one made before versions were): "
                                                  "audit the benchmark again into a new folder")
    if not is_apex(root):
        raise InputError(root, None, f"no {TASKS_FILE} here: patch reads and writes APEX "
                                     f"benchmarks (give --bench the folder audited)")
    loaded = load_benchmark(root)
    assert loaded.version is not None
    if loaded.version.sha256 != version.sha256:
        raise InputError(root / TASKS_FILE, None, f"version {loaded.version.sha256[:12]} is not "
                                                  f"the version audited ({version.sha256[:12]}): "
                                                  f"audit it again, or give --bench the folder "
                                                  f"audited")
    return loaded


class Proposed(BaseModel):
    path: Path
    proposals: Proposals
    added: int
    kept: int
    unusable: int = 0
    failed: int = 0


def propose_patch(out: Path, path: Path, bench: Path | None = None,
                  model: ModelConfig | None = None) -> Proposed:
    """`patch OUT --propose`: a proposal per confirmed defect, written to (or added to) `path`;
    with a model (checked by the caller), its rewordings where a kind takes one."""
    with open_audit(out / "audit.db") as store:
        benchmark = audited_benchmark(store, bench)
        defects = confirmed_defects(store.findings(), store.reviews(), store.finding_reviews())
    proposals = propose(benchmark, defects)
    unusable = failed = 0
    if model is not None:
        tasks = {t.id: t for t in benchmark.tasks}
        reworded, unusable, failed = anyio.run(reword, proposals.proposal, tasks, model,
                                               ResponseCache(default_cache_path()))
        proposals = proposals.model_copy(update={"proposal": reworded})
    added, kept = write_proposals(path, proposals)
    return Proposed(path=path, proposals=proposals, added=added, kept=kept, unusable=unusable,
                    failed=failed)


class Patched(BaseModel):
    out: Path
    record: PatchRecord
    verification: Verification


async def judge_changed(config: ModelConfig, template: JudgeTemplate, before: dict[str, Task],
                        after: dict[str, Task], attempts: list[Attempt], concurrency: int
                        ) -> dict[tuple[str, str], tuple[Verdict, str]]:
    """The judge's verdict on every changed criterion of every graded attempt of a patched
    task, by (attempt, criterion); one the provider failed on is absent."""
    cache = ResponseCache(default_cache_path())
    limiter = anyio.CapacityLimiter(concurrency)
    out: dict[tuple[str, str], tuple[Verdict, str]] = {}

    async def one(attempt: Attempt, task: Task) -> None:
        run = await grade_attempt(config, template, task, attempt, cache, limiter)
        for result in run.verifier_results:
            values = result["verifier_result_values"]
            out[(attempt.id, result["verifier_id"])] = (values["judge_grade"] or "unscored",
                                                        values["grade_rationale"])

    async with anyio.create_task_group() as group:
        for attempt in attempts:
            task = after.get(attempt.task_id)
            if task is None or attempt.state != "graded" or attempt.answer is None:
                continue
            changed = changed_criteria(before[task.id], task)
            if changed:
                group.start_soon(one, attempt, task.model_copy(update={"criteria": [
                    c for c in task.criteria if c.id in changed]}))
    return out


def verify_patch(before: dict[str, Task], after: dict[str, Task], attempts: list[Attempt],
                 store_grades: list[CriterionGrade], path: Path,
                 judged: tuple[str, dict[tuple[str, str], tuple[Verdict, str]]] | None
                 ) -> Verification:
    """Controls before and after (refusing a control the patch breaks) and every attempt graded
    again, by the code checker and, where given, the judge."""
    controls = check_controls(before, after)
    broken = next((c for c in controls if c.broken_by_patch), None)
    if broken is not None:
        raise InputError(path, None, f"refused: the patch breaks a control of {broken.task_name}: "
                                     f"{broken.after}")
    scores, changed = regrade(before, after, attempts, store_grades, code_regrader,
                              "the code checker")
    if judged is not None:
        judge, verdicts = judged

        def by_judge(attempt: Attempt, task: Task, criterion: Criterion) -> tuple[Verdict, str]:
            return verdicts.get((attempt.id, criterion.id),
                                ("unscored", f"{judge} gave no verdict (provider unavailable)"))

        more, changed_too = regrade(before, after, attempts, store_grades, by_judge, judge)
        scores += more
        changed += changed_too
    return Verification(controls=controls, scores=scores, changed=changed)


def patch_benchmark(out: Path, new: Path, path: Path, bench: Path | None = None,
                    judge: tuple[ModelConfig, JudgeTemplate, int] | None = None) -> Patched:
    """`patch OUT --out NEW`: the accepted proposals applied to a new benchmark folder, read
    back through the loader and verified, with patch.json and CHANGELOG.md; refused whole (one
    line, nothing written) where a proposal cannot apply or a control breaks."""
    if new.exists():
        raise InputError(new, None, "exists: patch writes a new benchmark folder (choose one "
                                    "that does not exist)")
    proposals = read_proposals(path)
    with open_audit(out / "audit.db") as store:
        benchmark = audited_benchmark(store, bench)
        attempts, grades = store.attempts(), store.grades()
    assert benchmark.version is not None
    if proposals.version != benchmark.version.sha256:
        raise InputError(path, "version", f"proposals for version {proposals.version[:12]}, not "
                                          f"the version audited ({benchmark.version.sha256[:12]})")
    root = Path(benchmark.root).resolve()
    if new.resolve().is_relative_to(root):
        raise InputError(new, None, "inside the benchmark it patches: choose a folder outside it")
    chosen = accepted(proposals, path)
    if not chosen:
        raise InputError(path, None, "no proposal accepted: set decision = \"accept\" (or "
                                     "\"edit\") on those to apply")
    before = {t.id: t for t in benchmark.tasks}
    patched, records = apply(before, chosen, path)
    after = {task_id: t for task_id, t in patched.items() if t != before[task_id]}
    judged = None
    if judge is not None:
        config, template, concurrency = judge
        judged = (f"judge:{config.model}", anyio.run(judge_changed, config, template, before,
                                                       after, attempts, concurrency))
    make_writable_folder(new.parent)
    remove_stale_staging(new)
    with staged(new, "another patch wrote this folder first (while this one ran)") as staging:
        copy_benchmark(root, staging)
        data = write_tasks(root, staging, after)
        records += renumber_recipes(root, staging, before, after, records)
        read_back = {t.id: t for t in load_benchmark(staging).tasks}
        if read_back != patched:
            raise RuntimeError("the patched benchmark reads back other than patched: "
                               + ", ".join(t for t in patched if read_back.get(t) != patched[t]))
        verification = verify_patch(before, {t: read_back[t] for t in after}, attempts, grades,
                                    path, judged)
        record = patch_record(benchmark, hashlib.sha256(data).hexdigest(), records, verification)
        write_record(staging, record, changelog(new.name, record, verification, before))
    return Patched(out=new, record=record, verification=verification)


def write_packets(out: Path, fmt: str, path: Path, bench: Path | None = None) -> list[Path]:
    """`defects OUT`: a packet per confirmed defect into OUT/defects/ (replaced whole), with
    the proposals of the file at `path` where there is one (the author's decisions, a model's
    rewordings), else those written in code."""
    if fmt not in ("markdown", "json"):
        raise InputError("--format", None, f"expected markdown or json, got {fmt!r}")
    with open_audit(out / "audit.db") as store:
        benchmark = audited_benchmark(store, bench)
        found = store.findings()
        defects = confirmed_defects(found, store.reviews(), store.finding_reviews())
        attempts, grades = store.attempts(), store.grades()
    order = {t.id: (i, {c.id: j for j, c in enumerate(t.criteria)})
             for i, t in enumerate(benchmark.tasks)}
    defects.sort(key=lambda d: (order[d.task_id][0] if d.task_id in order else len(order),
                                order.get(d.task_id, (0, {}))[1].get(d.criterion_id or "", -1)))
    proposals = propose(benchmark, defects)
    if path.is_file():
        decided = read_proposals(path)
        if decided.version == proposals.version:
            proposals = proposals.model_copy(update={"proposal": decided.proposal})
    packets = make_packets({t.id: t for t in benchmark.tasks}, defects, proposals, attempts,
                           grades, found, path)
    return write_folder(out / "defects", packet_files(packets, fmt))
