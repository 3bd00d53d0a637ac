"""What every command shares: the app, its consoles, option types, one line per user error,
and the model settings the command line gives."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal, ParamSpec, TypeVar

import click
import typer
from rich.console import Console

from rubric_audit.core.errors import InputError, InputProblems, input_error_in
from rubric_audit.core.text import console_line as shown_line
from rubric_audit.core.text import json_document

if TYPE_CHECKING:
    from rubric_audit.core.llm import ModelConfig
    from rubric_audit.core.model import SourceSummary

app = typer.Typer(
    name="rubric-audit",
    help="Measure how much of an LLM-judged benchmark's failure (and success) is the benchmark's "
         "fault.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Piped output gets a wide console so tables keep whole ids on one line. Rich's highlighter is
# off: its regexes took minutes over a stranger's 5,000-digit name and coloured parts of names.
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

P = ParamSpec("P")
R = TypeVar("R")
# Every number option has a ceiling, so no value reaches SQLite, numpy or asyncio too large
# for them (a --limit of 10^20 overflowed SQLite's INTEGER).
MAX_CONCURRENCY = 10_000
MAX_SEED = 2**32 - 1

BenchArg = Annotated[Path, typer.Argument(
    help="Benchmark directory: an APEX dataset or an Archipelago task package.")]
JudgeMode = Literal["auto", "json-schema", "json-object-schema", "tools", "json"]
JudgeModeOption = Annotated[JudgeMode, typer.Option(
    "--judge-mode",
    help="How the judge is asked for structured replies: auto (the strictest the provider "
         "applies, by litellm's data or a probe at the check), json-schema, json-object-schema "
         "(llama.cpp's schema-constrained JSON object), tools, or json (prompted).")]
MaxOutputOption = Annotated[int | None, typer.Option(
    "--max-output-tokens", min=1, max=1_000_000,
    help="Output cap of each model call (default 1024 for structured replies, 4096 for an "
         "agent's step); a reply cut there is unscored, never waited on.")]
CallTimeoutOption = Annotated[float, typer.Option(
    "--call-timeout", min=1, max=86_400,
    help="Seconds a model request may take before it is cut (retried like a lost connection).")]
TimeBudgetOption = Annotated[float | None, typer.Option(
    "--time-budget", min=1, max=30 * 86_400,
    help="Seconds the command's model calls may take in all, from its start: calls not made or "
         "not finished by then are recorded as unavailable (never as failures), what was done is "
         "kept.")]

BatchOption = Annotated[bool, typer.Option(
    "--batch", help="Send the judge's calls through the provider's batch API (about half the "
                    "price; hours rather than minutes): the batch is recorded, so running the "
                    "command again resumes or collects it.")]

RayOption = Annotated[bool, typer.Option(
    "--ray", help="Run on a Ray cluster: RAY_ADDRESS's, else one started on this machine (the "
                  "ray extra).")]
RayAddressOption = Annotated[str | None, typer.Option(
    "--ray-address", help="The Ray cluster to join (auto, or ray://HOST:10001); implies --ray.")]


JsonOption = Annotated[bool, typer.Option(
    "--json", help="Print one JSON document on stdout instead of tables (for scripts).")]


def print_json(value: object) -> None:
    """`value` (a pydantic model, or plain data holding them) as one JSON document on stdout."""
    from pydantic import TypeAdapter

    typer.echo(json_document(TypeAdapter(object).dump_python(value, mode="json")))


class _Options:
    debug = False


def _print_version(asked: bool) -> None:
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"rubric-audit {version('rubric-audit')}")
        except PackageNotFoundError:  # run from a source tree that was never installed
            typer.echo("rubric-audit (not installed: no version)")
        raise typer.Exit()


@app.callback()
def _global_options(debug: Annotated[bool, typer.Option(
        "--debug", envvar="RUBRIC_AUDIT_DEBUG",
        help="Show the traceback of an internal error instead of one line, and the log lines "
             "of the libraries (litellm) on stderr too.")] = False,
        _version: Annotated[bool, typer.Option(
            "--version", callback=_print_version, is_eager=True,
            help="Print rubric-audit's version and exit.")] = False) -> None:
    _Options.debug = debug
    from rubric_audit.core import llm  # litellm itself is imported only by a command that calls models

    llm.show_library_logs = debug


def _spelled(command: Callable[..., object]) -> dict[str, str]:
    """How the command line spells each parameter of `command`: `--model` for an option (its
    first declared name), `QUERY` for an argument."""
    import typing

    from typer.models import OptionInfo

    try:
        hints = typing.get_type_hints(command, include_extras=True)
    except NameError:  # an annotation only a type checker resolves: say the Python name
        return {}
    spelled = {}
    for name, hint in hints.items():
        option = next((m for m in getattr(hint, "__metadata__", ()) if isinstance(m, OptionInfo)),
                      None)
        declared = [d for d in (option.param_decls or ()) if d.startswith("--")] if option else []
        spelled[name] = (declared[0] if declared else f"--{name.replace('_', '-')}") if option \
            else name.upper()
    return spelled


def _check_text_arguments(arguments: dict[str, object], spelled: dict[str, str]) -> None:
    """Refuse a text argument or option that is not UTF-8 (bytes from the shell, which Python
    keeps as lone surrogates: no terminal, query or store can take them), naming it."""
    for name, value in arguments.items():
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise InputError(spelled.get(name, name), None, "not UTF-8 text") from None


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn InputError into one line on stderr and exit code 2, with no traceback; anything
    unexpected (a bug) into one line and exit code 1, unless --debug asks for the traceback."""

    spelled = _spelled(command)

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            _check_text_arguments(kwargs, spelled)
            return command(*args, **kwargs)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except InputProblems as problems:
            for problem in problems.problems:
                err.print(f"[bold red]error:[/] {shown_line(str(problem))}")
            raise typer.Exit(2) from None
        except Exception as exc:
            if (unusable := input_error_in(exc)) is not None:  # a task group's: an ExceptionGroup
                err.print(f"[bold red]error:[/] {shown_line(str(unusable))}")
                raise typer.Exit(2) from None
            if _Options.debug:
                raise
            what = (str(exc).strip().splitlines() or [""])[0][:300]
            err.print(f"[bold red]internal error[/] ({shown_line(type(exc).__name__)}: "
                      f"{shown_line(what)}); run with --debug for the traceback")
            raise typer.Exit(1) from None

    return wrapper


def print_sources(sources: list[SourceSummary]) -> None:
    """Per source: what it gave (ungraded attempts where there are any), why attempts are
    unavailable, and what could not be mapped."""
    for s in sources:
        reasons = counted(s.unavailable_reasons, "; ")
        ungraded = f"{s.ungraded} ungraded, " if s.ungraded else ""
        read_as = shown_line(f"{s.format}, variant {s.variant}" if s.variant else s.format)
        controls = f", {s.controls} recorded controls" if s.controls else ""
        out.print(f"Read {shown_line(s.path)} ({read_as}): {s.attempts} attempts, {s.graded} graded, "
                  f"{ungraded}{s.unavailable} unavailable"
                  f"{shown_line(f' ({reasons})') if reasons else ''}; "
                  f"{s.tasks} tasks, {s.criteria} criteria{controls}.")
        if s.answer_rules:
            out.print("  answers: " + shown_line(counted(s.answer_rules)))
        if s.model_from:
            out.print("  [yellow]model not in the attempt's own config,[/] read from: "
                      + shown_line(counted(s.model_from)))
        for item in s.unmapped:
            out.print(f"  [yellow]not mapped:[/] {shown_line(item)}")


def counted(counts: dict[str, int], separator: str = ", ") -> str:
    return separator.join(f"{n} x {what}" for what, n in counts.items())


def model_config(model: str, api_base: str | None, max_output_tokens: int | None = None,
                  call_timeout: float = 120.0, mode: JudgeMode = "auto",
                  time_budget: float | None = None) -> ModelConfig:
    """A model as the command line sets it: `auto` leaves the structured mode to the check; the
    time budget runs from now."""
    from rubric_audit.core.llm import ModelConfig, deadline_after

    return ModelConfig(model=model, api_base=api_base, max_output_tokens=max_output_tokens,
                       timeout=call_timeout, structured_mode=None if mode == "auto" else mode,
                       deadline=deadline_after(time_budget))


