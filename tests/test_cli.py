"""The command line: listing, showing, importing and the main job, and how it refuses bad input."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.model import Review
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import (
    FIXTURES,
    SAMPLE,
    SHARED_RUNS,
    folder_contents,
    make_benchmark,
    make_task,
    make_variant,
)

runner = CliRunner()


def invoke(*args: str | Path):
    return runner.invoke(app, [str(a) for a in args])


def test_tasks_lists_every_task(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task("task_1"), make_task("task_2")])
    result = invoke("tasks", root)
    assert result.exit_code == 0
    assert "task_1" in result.stdout and "task_2" in result.stdout and "2 tasks" in result.stdout


def test_show_prints_prompt_rubric_gold_and_world(bench: Path) -> None:
    result = invoke("show", bench, "name_task_1")
    assert result.exit_code == 0, result.output
    for expected in ("What is the revised budget?", "States the budget is 1.2m",
                     "From Alice's mail.", "The revised budget is 1.2m", "docs/notes.md",
                     "Re: Budget numbers", "Budget review", "Budget team: 1 messages"):
        assert expected in result.stdout


def test_show_unknown_task_is_a_user_error(bench: Path) -> None:
    result = invoke("show", bench, "nope")
    assert result.exit_code == 2 and "no task 'nope'" in result.stderr


def test_import_reports_counts(tmp_path: Path) -> None:
    result = invoke("import", SHARED_RUNS, "--db", tmp_path / "out" / "audit.db")
    assert result.exit_code == 0
    assert "24 graded and 4 unavailable attempts added" in result.stdout
    again = invoke("import", SHARED_RUNS, "--db", tmp_path / "out" / "audit.db")
    assert "0 graded and 0 unavailable attempts added, 28 already stored." \
        in again.stdout


def _audit_bench(tmp_path: Path) -> Path:
    task = make_task()
    root = make_benchmark(tmp_path / "b", tasks=[task])
    make_variant(root / "runs", "m1-base", "m/one", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "pass"}),
        (task, 2, {"task_1_c1": "pass", "task_1_c2": "fail"}),
        (task, 3, None)], failures=["task_1"])
    return root


def test_audit_uses_shipped_runs_and_writes_outputs(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    result = invoke("audit", root, "--out", out)
    assert result.exit_code == 0, result.output
    assert "no model was called" in result.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "audit.db", "audit.json", "findings.jsonl", "report.html", "report.md", "site"]
    [wrote] = [line for line in result.stdout.splitlines() if line.startswith("Wrote ")]
    assert all(f"{p.name}{'/' if p.is_dir() else ''}" in wrote for p in out.iterdir()), \
        "the last line names everything the audit wrote"
    summary = json.loads((out / "audit.json").read_text())
    [score] = summary["scores"]
    assert (score["graded_attempts"], score["unavailable_attempts"]) == (2, 1)
    assert score["pass_at_1"] == 0.5 and score["mean_criterion_score"] == 0.75
    assert summary["unavailable"][0]["attempt"] == "m1-base/task_1/3"
    assert "| m/one | m1-base | recorded |" in (out / "report.md").read_text()
    assert (out / "findings.jsonl").read_text() == ""


def test_rerunning_audit_keeps_reviews(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    with AuditStore(out / "audit.db") as store:
        store.append_review(Review(reviewer="ana", created_at="t", task_id="task_1",
                                   label="model_error"))
    assert invoke("audit", root, "--out", out).exit_code == 0
    with AuditStore(out / "audit.db") as store:
        assert len(store.reviews()) == 1 and len(store.attempts()) == 3


def test_findings_are_written_and_the_run_goes_on(tmp_path: Path) -> None:
    task = make_task()
    task["rubric"][1]["criteria"] = ""
    root = make_benchmark(tmp_path / "b", tasks=[task])
    out = tmp_path / "out"
    assert invoke("audit", root, "--out", out).exit_code == 0
    lines = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    assert [(f["check"], f["criterion_id"], f["severity"]) for f in lines] == [
        ("input_empty_criterion", "task_1_c2", "error")]


def test_bad_input_is_one_line_exit_2_and_no_output(tmp_path: Path) -> None:
    task = make_task()
    del task["world_id"]
    root = make_benchmark(tmp_path / "b", tasks=[task])
    out = tmp_path / "out"
    result = invoke("audit", root, "--out", out)
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {root / 'tasks_and_rubrics.json'}: [0].world_id: missing required field"]
    assert not out.exists() and list(tmp_path.iterdir()) == [root]


def test_bad_runs_leave_an_existing_output_untouched(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    before = folder_contents(out)
    (tmp_path / "junk").mkdir()
    result = invoke("audit", root, "--runs", tmp_path / "junk", "--out", out)
    assert result.exit_code == 2 and "not a run folder" in result.stderr
    assert folder_contents(out) == before


def test_audit_refuses_an_output_of_another_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "out"
    invoke("audit", _audit_bench(tmp_path / "one"), "--out", out)
    other = make_benchmark(tmp_path / "other")
    result = invoke("audit", other, "--out", out)
    assert result.exit_code == 2 and "holds an audit of 'b'" in result.stderr


def test_installed_console_script_runs(bench: Path) -> None:
    done = subprocess.run(["rubric-audit", "tasks", str(bench)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and "task_1" in done.stdout
    bad = subprocess.run(["rubric-audit", "tasks", str(bench / "nope")], capture_output=True,
                         text=True, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_run_with_an_escaping_task_id_writes_nothing(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "bench" / "b", tasks=[make_task("aaaa/../../../../ESCAPED")])
    before = sorted(tmp_path.rglob("*"))
    result = invoke("run", root, "--model", "openai/none", "--out", tmp_path / "bench" / "runs")
    assert result.exit_code == 2 and "[0].task_id: not usable as a folder name" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before


def test_run_with_an_escaping_variant_name_writes_nothing(bench: Path, tmp_path: Path) -> None:
    before = sorted(tmp_path.rglob("*"))
    result = invoke("run", bench, "--model", "openai/none", "--out", tmp_path / "runs",
                    "--variant", "../../ESCAPED")
    assert result.exit_code == 2 and "--variant" in result.stderr
    assert sorted(tmp_path.rglob("*")) == before


# What the slim install (`pip install -e .`) lacks: the models extra and what only it pulls in.
# httpx, also in the extra, stays: mcp brings it.
NOT_IN_THE_SLIM_INSTALL = ("litellm", "instructor", "openai", "tenacity", "tiktoken", "tokenizers",
                           "huggingface_hub", "aiohttp", "jiter", "boto3")
WITHOUT_THE_MODEL_STACK = (
    "import sys\n"
    f"for name in {NOT_IN_THE_SLIM_INSTALL!r}:\n"
    "    sys.modules[name] = None  # import fails and find_spec says missing, as when not installed\n"
    "from typer.testing import CliRunner\nfrom rubric_audit.cli import app\n")


def test_the_offline_audit_runs_without_the_model_stack_and_imports_none_of_it(
        tmp_path: Path) -> None:
    """The slim install stays slim: with the models extra unimportable, --help, tasks and the
    offline audit of the sample work, and nothing of the model stack is imported (litellm alone
    costs seconds)."""
    script = WITHOUT_THE_MODEL_STACK + (
        "for args in sys.argv[1:]:\n"
        "    done = CliRunner().invoke(app, args.split())\n"
        "    assert done.exit_code == 0, (args, done.output)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {NOT_IN_THE_SLIM_INSTALL!r}"
        " and sys.modules[m] is not None))")
    done = subprocess.run(
        [sys.executable, "-c", script, "--help", f"tasks {SAMPLE}",
         f"audit {SAMPLE} --out {tmp_path / 'out'}", f"report {tmp_path / 'out'}"],
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "out" / "report.md").is_file()


def test_each_model_command_asks_for_the_models_extra_in_one_line(tmp_path: Path) -> None:
    runs = SAMPLE / "runs" / "atlas-1"
    commands = [
        f"run {SAMPLE} --model openai/a --out {tmp_path / 'runs'} --tasks nordlys_01",
        f"grade {runs} --judge openai/j",
        f"suggest {tmp_path / 'none'} --model openai/s",
        f"audit {SAMPLE} --out {tmp_path / 'out'} --lint-model openai/l",
        f"ablate {SAMPLE} --model openai/a --sentence Hi. --judge openai/j --out {tmp_path / 'r'}"]
    script = WITHOUT_THE_MODEL_STACK + (
        "import json\n"
        "print(json.dumps([(r.exit_code, r.stderr) for r in\n"
        "                  (CliRunner().invoke(app, args.split()) for args in sys.argv[1:])]))")
    done = subprocess.run([sys.executable, "-c", script, *commands], capture_output=True,
                          text=True, check=True)
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for command, (code, stderr), option in zip(
            commands, results, ["--model", "--judge", "--model", "--lint-model", "--model"],
            strict=True):
        assert code == 2, (command, stderr)
        [line] = stderr.strip().splitlines()
        assert f": {option}: calling a model needs the models extra (litellm" in line, line
        assert line.endswith("pip install 'rubric-audit[models]'"), line
    assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()
    assert not (tmp_path / "r").exists()


def test_runs_takes_several_folders_after_one_flag(tmp_path: Path) -> None:
    """`--runs A B` as the README writes it (B is read as one of the RUNS arguments)."""
    task = make_task()
    root = make_benchmark(tmp_path / "b", tasks=[task])
    graded = {"task_1_c1": "pass", "task_1_c2": "pass"}
    one = make_variant(tmp_path / "runs", "one", "m/one", [(task, 1, graded)])
    two = make_variant(tmp_path / "runs", "two", "m/two", [(task, 1, graded)])
    result = invoke("audit", "--bench", root, "--runs", one, two, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    scores = json.loads((tmp_path / "out" / "audit.json").read_text())["scores"]
    assert {s["variant"] for s in scores} == {"one", "two"}
def test_an_unexpected_error_is_one_line_and_exit_1(bench: Path, monkeypatch) -> None:
    import rubric_audit.load.benchmark

    def broken(root: Path) -> None:
        raise RuntimeError("a bug\nwith a second line")

    monkeypatch.setattr(rubric_audit.load.benchmark, "load_benchmark", broken)
    result = invoke("tasks", bench)
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        "internal error (RuntimeError: a bug); run with --debug for the traceback"]
    debug = runner.invoke(app, ["--debug", "tasks", str(bench)])
    assert isinstance(debug.exception, RuntimeError)


def test_an_empty_audit_db_is_refused_and_reports_kept(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    (out / "audit.db").write_bytes(b"")
    before = folder_contents(out)
    for args in (("audit", root, "--out", out), ("report", out)):
        result = invoke(*args)
        assert result.exit_code == 2 and "empty file (0 bytes)" in result.stderr
    assert folder_contents(out) == before


def test_a_stored_row_that_is_not_json_is_one_line(tmp_path: Path) -> None:
    import sqlite3

    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    db = sqlite3.connect(out / "audit.db")
    db.execute("UPDATE attempts SET json = '{not json' WHERE attempt_index = 1")
    db.commit()
    db.close()
    result = invoke("report", out)
    assert result.exit_code == 2 and "Attempt row" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_failed_audit_leaves_the_previous_store_and_reports(tmp_path: Path,
                                                              monkeypatch) -> None:
    import rubric_audit.audit.stages

    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    with AuditStore(out / "audit.db") as store:
        stored = (store.attempts(), store.grades(), store.findings())
    before = folder_contents(out, "audit.db")
    make_variant(root / "runs", "m2-base", "m/two", [
        (make_task(), 1, {"task_1_c1": "fail", "task_1_c2": "fail"})])

    def crash(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(rubric_audit.audit.stages, "check_attempts", crash)
    result = invoke("audit", root, "--out", out)
    assert result.exit_code == 1 and "internal error (OSError: disk full)" in result.stderr
    with AuditStore(out / "audit.db") as store:
        assert (store.attempts(), store.grades(), store.findings()) == stored
    assert folder_contents(out, "audit.db") == before


def test_staging_folders_of_a_killed_audit_are_removed(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path / "b")
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".out.{dead.pid}.abc123"
    (stale / "half").mkdir(parents=True)
    running = tmp_path / f".out.{os.getpid()}.def456"  # a live process's: not touched
    running.mkdir()
    assert invoke("audit", root, "--out", tmp_path / "out").exit_code == 0
    assert not stale.exists() and running.is_dir()


@contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """`folder` made unwritable for this process: by its mode, or, for root (whom modes do not
    stop, and CI runs as root), by the immutable attribute (chattr +i), which stops root too."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(folder)],
                                        capture_output=True).returncode != 0:
        pytest.skip("as root only an immutable folder is unwritable, and chattr +i failed here")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


def test_a_read_only_output_folder_is_one_line(tmp_path: Path) -> None:
    root = _audit_bench(tmp_path)
    out = tmp_path / "out"
    invoke("audit", root, "--out", out)
    before = folder_contents(out)
    with unwritable(out):
        results = [invoke("audit", root, "--out", out), invoke("report", out)]
    for result in results:  # the audit's results reused, or the reports again: both refused
        assert result.exit_code == 2 and "not writable" in result.stderr, result.output
    assert folder_contents(out) == before


def test_names_that_look_like_markup_are_printed_as_written(tmp_path: Path) -> None:
    task = make_task(task_name="[/x] [bold]evil", domain="[/y]", world_id="[/z]")
    root = make_benchmark(tmp_path / "b", tasks=[task])
    make_variant(root / "runs", "[bold]v", "[/m]", [
        (task, 1, {"task_1_c1": "pass", "task_1_c2": "fail"})])
    printed = {}
    for args in (("tasks", root), ("show", root, "task_1"),
                 ("audit", root, "--out", tmp_path / "out")):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
        printed[args[0]] = result.stdout
    assert "[/x] [bold]evil" in printed["tasks"] and "World: [/z]" in printed["show"]
    assert "| [/m] " in printed["audit"].replace("│", "|"), printed["audit"]


@pytest.mark.parametrize("where", ["missing", "empty"])
def test_export_without_an_audit_refuses_and_creates_nothing(tmp_path: Path, where: str) -> None:
    """A folder that holds no audit is refused before any export folder is made, beside it or
    inside it."""
    target = tmp_path / where
    if where == "empty":
        target.mkdir()
    result = invoke("export", target, "--format", "csv")
    assert result.exit_code == 2 and "no audit.db here" in result.stderr
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == (
        [Path("empty")] if where == "empty" else [])


LAW_428 = FIXTURES / "archipelago-examples" / "world-export-law-428"


def test_tasks_and_show_read_a_task_package_and_say_its_world_files_are_absent() -> None:
    listing = invoke("tasks", LAW_428)
    assert listing.exit_code == 0, listing.output
    assert "24 tasks" in listing.stdout and "World428_RO_01" in listing.stdout
    shown = invoke("show", LAW_428, "World428_RO_01")
    assert shown.exit_code == 0, shown.output
    for expected in ("Liverbird", "$8,200 (acceptable range $8,118 to $8,282)",
                     "why: Pursuant to Section 3.1", "ENA Expenses.xlsx",
                     "The world's shared files are not in this benchmark"):
        assert expected in shown.stdout


@pytest.mark.parametrize("given", ["--bench", "positional"])
def test_audit_of_a_task_package_runs_every_check_that_needs_no_world(tmp_path: Path,
                                                                      given: str) -> None:
    out = tmp_path / "out"
    args = ["--bench", LAW_428] if given == "--bench" else [LAW_428]
    result = invoke("audit", *args, "--out", out)
    assert result.exit_code == 0, result.output
    assert "Audited 24 tasks" in result.stdout
    assert "Skipped (needs the world's files)" in result.stdout and "on 24 tasks" in result.stdout
    checks = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    missing = [f for f in checks if f["check"] == "input_world_files_missing"]
    assert len(missing) == 24 and {f["severity"] for f in missing} == {"warning"}
    assert not {"prompt_names_missing_file", "criterion_terms_absent_from_world",
                "task_depends_on_messages"} & {f["check"] for f in checks}
    assert "criterion_restates_premise" in {f["check"] for f in checks}
    # its numbers are list markers ("States 2. Draft ...") and a ZIP code: no tolerance finding,
    # only the benchmark's line of numeric criteria that state none
    assert "numeric_criterion_without_tolerance" not in {f["check"] for f in checks}
    [line] = json.loads((out / "audit.json").read_text())["findings"]["summaries"]
    assert line["check"] == "numeric_criterion_without_tolerance" and line["findings"] == 0


def test_audit_refuses_another_version_of_its_benchmark(tmp_path: Path) -> None:
    """One audit.db holds one version of a benchmark: scores of two are never mixed."""
    out = tmp_path / "out"
    root = _audit_bench(tmp_path / "one")
    assert invoke("audit", root, "--out", out).exit_code == 0
    tasks = json.loads((root / "tasks_and_rubrics.json").read_text())
    tasks[0]["prompt"] += " Answer in one line."
    (root / "tasks_and_rubrics.json").write_text(json.dumps(tasks))
    result = invoke("audit", root, "--out", out)
    assert result.exit_code == 2 and "scores of two versions are never mixed" in result.stderr
    assert "Benchmark version" in (out / "report.md").read_text(), "the first version's report"


def test_version() -> None:
    from importlib.metadata import version

    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout == f"rubric-audit {version('rubric-audit')}\n"


def test_a_task_is_found_but_for_case_and_a_typo_names_the_closest(bench: Path) -> None:
    assert "What is the revised budget?" in invoke("show", bench, "NAME_TASK_1").stdout
    result = invoke("show", bench, "name-task-1")
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        "task: no task 'name-task-1' (by id or name); did you mean 'name_task_1'?")
    far = invoke("show", bench, "zzzz")
    assert far.exit_code == 2 and far.stderr.strip().endswith("no task 'zzzz' (by id or name)")
    run = invoke("run", bench, "--model", "openai/m", "--out", bench.parent / "runs", "--tasks",
                 "task_l")
    assert run.exit_code == 2 and "--tasks: no task 'task_l' (by id or name); did you mean " \
        "'task_1'?" in run.stderr


def test_a_benchmark_where_an_output_folder_belongs_is_named_and_the_reverse(
        tmp_path: Path) -> None:
    """Each command told a folder of the other kind says what the folder is, in one line, and
    writes nothing into a benchmark."""
    bench = make_benchmark(tmp_path / "bench")
    before = sorted(tmp_path.rglob("*"))
    for args in (["report", bench], ["search", bench, "x"], ["export", bench],
                 ["review", bench], ["reviews", bench]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.strip() == (
            f"error: {bench}: a benchmark, not an audit's output folder: audit it first "
            f"(`rubric-audit audit BENCH --out OUT`), then give OUT"), args
    for args, option in ((["audit", bench, "--out", bench], "--out"),
                         (["import", FIXTURES / "apex-agents-runs", "--db", bench / "audit.db"],
                          "--db")):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert f"{bench}: {option}: a benchmark, not an output folder" in result.stderr
    assert sorted(tmp_path.rglob("*")) == before
    out = tmp_path / "out"
    assert invoke("audit", bench, "--out", out).exit_code == 0
    for args in (["tasks", out], ["show", out, "task_1"], ["regold", out, "--all"]):
        result = invoke(*args)
        assert result.exit_code == 2 and result.stderr.strip() == (
            f"error: {out}: an audit's output folder (audit.db, reports), not a benchmark: give "
            f"the benchmark folder it audited"), args
    runs = invoke("ablate", "--compare", out, bench)
    assert runs.exit_code == 2 and "an audit's output folder (audit.db, reports), not a run " \
        "folder" in runs.stderr
    both = invoke("ablate", "--compare", SHARED_RUNS / "grok43high-baseline", bench)
    assert both.exit_code == 2 and f"{bench}: a benchmark, not a run folder" in both.stderr


def test_tasks_and_show_as_json(bench: Path) -> None:
    listed = json.loads(invoke("tasks", bench, "--json").stdout)
    assert [(t["id"], t["name"], t["criteria"], t["gold"], t["recipe"])
            for t in listed["tasks"]] == [("task_1", "name_task_1", 2, "text", False)]
    shown = json.loads(invoke("show", bench, "task_1", "--json").stdout)
    assert shown["task"]["prompt"] == "What is the revised budget?"
    assert [f["path"] for f in shown["files"]] == ["docs/notes.md"]
    assert "Re: Budget numbers" in [m["subject"] for m in shown["mail"]]


def test_help_shows_every_bracketed_word_of_an_option() -> None:
    """Help is rendered by Rich, which reads "[keys]" as markup and drops it: an option's help
    shows every bracketed word it was written with."""
    import re

    import typer

    checked = 0
    for name, command in getattr(typer.main.get_command(app), "commands", {}).items():
        shown = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "300"}).output
        for param in command.params:
            for word in re.findall(r"\[[^\]\s]+\]", getattr(param, "help", None) or ""):
                checked += 1
                assert word in shown, f"{name} {param.name}: {word} not shown"
    assert checked, "some option's help has a bracketed word"
