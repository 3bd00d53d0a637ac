"""Review: the app, the review log and its export, label suggestions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric_audit.cli.common import (
    MAX_SEED,
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


@app.command("review")
@user_errors
def review_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    reviewer: Annotated[str, typer.Option(help="Your name in the review log.")] = "reviewer",
    keymap: Annotated[Path | None, typer.Option(
        help="TOML file with a \\[keys] table: binding id = key.")] = None,
    per_domain: Annotated[int, typer.Option(min=1, max=100_000,
                                            help="Pass-audit sample per domain.")] = 5,
    seed: Annotated[int, typer.Option(min=0, max=MAX_SEED,
                                      help="Seed of the pass-audit sample (stored).")] = 0,
) -> None:
    """Review failures and a sample of passes in a terminal app (labels go to audit.db)."""
    from rubric_audit.review.session import ReviewData
    from tui.app import ReviewApp, load_keymap

    keys = load_keymap(keymap)  # refused before the store is opened
    data = ReviewData(out_dir, reviewer, per_domain, seed)
    try:
        ReviewApp(data, keys).run()
    finally:
        data.close()


@app.command("reviews")
@user_errors
def reviews_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    fmt: Annotated[str, typer.Option("--format", "--export", help="csv or json.")] = "csv",
) -> None:
    """Export every reviewer's current labels with their notes, Cohen's kappa for every pair
    of reviewers and Fleiss' kappa for all, over failures and passes apart, and the tasks
    where reviewers disagree, to OUT/export/ beside the audit's tables."""
    from rubric_audit.core.model import label_name
    from rubric_audit.report.frames import export_folder
    from rubric_audit.review.agreement import describe
    from rubric_audit.review.session import ReviewData

    if fmt not in ("csv", "json"):
        raise InputError("--format", None, f"expected csv or json, got {fmt!r}")
    data = ReviewData(out_dir, "export")
    try:
        rows, agreements = data.label_rows(), data.agreements()
        written = data.write_reviews(export_folder(out_dir), fmt, rows, agreements)
    finally:
        data.close()
    out.print(f"Wrote {', '.join(shown(str(p)) for p in written)}: {len(rows)} labels.")
    for group in agreements.values():
        out.print(shown(describe(group)))
        for d in group.disagreements:
            out.print(shown(f"  {d.task}: " + ", ".join(f"{r} {label_name(label)}"
                                                          for r, label in d.labels.items())))


@app.command("suggest")
@user_errors
def suggest_command(
    out_dir: Annotated[Path, typer.Argument(help="An audit's output folder (holds audit.db).")],
    model: Annotated[str, typer.Option(help="litellm model that proposes labels.")],
    api_base: Annotated[str | None, typer.Option(help="Provider base URL.")] = None,
    max_output_tokens: MaxOutputOption = None,
    call_timeout: CallTimeoutOption = 120.0,
    time_budget: TimeBudgetOption = None,
) -> None:
    """Have a model propose a label, with reasons, for each queued task (shown, never applied)."""
    import anyio

    from rubric_audit.core.llm import check_models
    from rubric_audit.review.session import ReviewData
    from rubric_audit.review.suggest import suggest
    from tui.render import triage_text

    config = check_models({"--model": model_config(model, api_base, max_output_tokens,
                                                    call_timeout, time_budget=time_budget)},
                          structured={"--model"})["--model"]
    data = ReviewData(out_dir, "suggest")
    try:
        made, unusable, failed = anyio.run(suggest, data, config, triage_text)
    finally:
        data.close()
    out.print(f"Stored {made} suggestions from {shown(model)}"
              + (f"; {unusable} replies unusable (did not parse, or named a label the task does "
                 f"not offer)" if unusable else "")
              + (f"; {failed} tasks got none (provider unavailable)." if failed else "."))
