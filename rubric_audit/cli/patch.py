"""From finding to fix: propose patches, write a verified patched benchmark, write defect packets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rubric_audit.cli.common import (
    MAX_CONCURRENCY,
    CallTimeoutOption,
    MaxOutputOption,
    TimeBudgetOption,
    app,
    model_config,
    out,
    user_errors,
)
from rubric_audit.core.errors import InputError
from rubric_audit.core.text import console as shown
from rubric_audit.core.text import console_line as shown_line
from rubric_audit.core.words import pct, plural

if TYPE_CHECKING:
    from rubric_audit.core.llm import ModelConfig

OutArg = Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")]
ProposalsOption = Annotated[Path | None, typer.Option(
    "--proposals", help="The proposals file (default OUT/proposals.toml).")]
BenchOption = Annotated[Path | None, typer.Option(
    "--bench", help="The benchmark folder audited, where it is not where the audit read it.")]


@app.command("patch")
@user_errors
def patch_command(
    out_dir: OutArg,
    propose: Annotated[bool, typer.Option(
        "--propose", help="Write a proposal per confirmed defect for you to decide.")] = False,
    new: Annotated[Path | None, typer.Option(
        "--out", help="Write the accepted proposals as a new benchmark folder, verified.")] = None,
    proposals: ProposalsOption = None,
    bench: BenchOption = None,
    model: Annotated[str | None, typer.Option(
        help="With --propose: a model writes rewordings (applied only once you accept them).")
                     ] = None,
    judge: Annotated[str | None, typer.Option(
        help="With --out: a judge grades the changed criteria of every recorded attempt too.")
                     ] = None,
    judge_template: Annotated[Path | None, typer.Option(help="Judge prompt template.")] = None,
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=MAX_CONCURRENCY,
                                             help="Judge calls at once.")] = 8,
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Propose a patch per confirmed defect (--propose), or write the accepted ones as a new,
    verified benchmark (--out NEW_BENCH)."""
    from rubric_audit.core.llm import check_models
    from rubric_audit.patch.proposals import default_path

    if propose == (new is not None):
        raise InputError("patch", None, "give --propose, or --out NEW_BENCH")
    if model is not None and not propose:
        raise InputError("--model", None, "writes rewordings of proposals: give it with --propose")
    if judge is not None and propose:
        raise InputError("--judge", None, "grades the patched benchmark: give it with --out")
    path = proposals or default_path(out_dir)
    given = {option: model_config(name, api_base, max_output_tokens, call_timeout,
                                  time_budget=time_budget)
             for option, name in (("--model", model), ("--judge", judge)) if name}
    checked = check_models(given, structured=set(given)) if given else {}
    if propose:
        _propose(out_dir, path, bench, checked.get("--model"))
    else:
        assert new is not None
        _patch(out_dir, new, path, bench, checked.get("--judge"), judge_template, concurrency)


def _propose(out_dir: Path, path: Path, bench: Path | None, model: ModelConfig | None) -> None:
    from rubric_audit.patch.job import propose_patch

    result = propose_patch(out_dir, path, bench, model)
    found = result.proposals
    out.print(f"Wrote {shown_line(str(path))}: {result.added} new proposals"
              + (f", {result.kept} kept as you left them" if result.kept else "")
              + f"; {len(found.unpatched)} confirmed defects no known kind of patch fixes "
                f"(listed in the file).")
    for p in found.proposal:
        out.print(f"  {p.kind} {shown_line(p.task_name)}: {shown_line(p.summary)}"
                  + (f" (written by {shown_line(p.written_by)})"
                     if p.written_by != "rubric-audit" else ""))
    for u in found.unpatched:
        out.print(f"  [yellow]no known kind:[/] {shown_line(u.task_name)}: {shown_line(u.reason)}")
    if result.unusable or result.failed:
        out.print(f"{result.unusable} rewordings unusable, {result.failed} not written (provider "
                  f"unavailable): those proposals keep the text written in code.")
    out.print("Decide each proposal in the file (accept, edit, reject), then: rubric-audit patch "
              "OUT --out NEW_BENCH")


def _patch(out_dir: Path, new: Path, path: Path, bench: Path | None, judge: ModelConfig | None,
           judge_template: Path | None, concurrency: int) -> None:
    from rubric_audit.grade.judge import load_template
    from rubric_audit.patch.job import patch_benchmark

    grading = (judge, load_template(judge_template), concurrency) if judge else None
    result = patch_benchmark(out_dir, new, path, bench, grading)
    record, verification = result.record, result.verification
    out.print(f"Wrote {shown_line(str(new))}: {len(record.changes)} changes to "
              f"{len({c.task for c in record.changes})} tasks, version {record.version[:12]} "
              f"(patched from {record.parent.version[:12]}); patch.json and CHANGELOG.md beside "
              f"them.")
    broken = [c for c in verification.controls if c.after is not None]
    out.print(f"Controls of the patched tasks, graded in code: {len(verification.controls)}, "
              f"{len(verification.controls) - len(broken)} hold"
              + (f", {len(broken)} broken as before the patch." if broken else "."))
    if verification.scores:
        table = Table(title="Scores before and after the patch")
        for column in ("model", "variant", "graded by", "graded", "before", "after", "change",
                       "unscored after"):
            table.add_column(column)
        for s in verification.scores:
            table.add_row(*map(shown, (s.model, s.variant, s.grader)), str(s.graded),
                          pct(s.before), pct(s.after), s.change(), str(s.unscored_after))
        out.print(table)
    if verification.changed:
        out.print(f"{len(verification.changed)} attempts changed verdict:")
    for c in verification.changed:
        out.print(f"  {shown_line(c.attempt)}: {c.before} -> {c.after}"
                  + (f" ({shown_line(c.grader)})" if len(verification.scores) > len(
                      {(s.model, s.variant) for s in verification.scores}) else ""))
    out.print(f"Audit it as a new version: rubric-audit audit {shown_line(str(new))} --runs "
              f"RUNS --out NEW_OUT")


@app.command("defects")
@user_errors
def defects_command(
    out_dir: OutArg,
    fmt: Annotated[str, typer.Option("--format", help="markdown (a packet each) or json.")
                   ] = "markdown",
    proposals: ProposalsOption = None,
    bench: BenchOption = None,
) -> None:
    """Write a packet per confirmed defect, ready for the benchmark's tracker, to OUT/defects/."""
    from rubric_audit.patch.job import write_packets
    from rubric_audit.patch.proposals import default_path

    written = write_packets(out_dir, fmt, proposals or default_path(out_dir), bench)
    out.print(f"Wrote {plural(len(written), 'file')} to {shown_line(str(out_dir / 'defects'))}/"
              + (": " + ", ".join(shown_line(p.name) for p in written[:5])
                 + (" ..." if len(written) > 5 else "") if written else
                 " (no confirmed defect: review the audit first)"))
