"""Unusable input from strangers: each kind is one line naming file and field, exit 2, no traceback.

Every case below once ended in a Python traceback. Each breaks one file of a small valid benchmark
with recorded runs, runs `audit` (and `serve` where the world is at fault) through the CLI, and
checks the one line, the exit code, and that an existing output folder is left as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import get_args

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.core.errors import InputError, read_bytes
from tests.conftest import (
    add_lying_entry,
    folder_contents,
    make_benchmark,
    make_task,
    make_variant,
)

runner = CliRunner()
TASK = make_task()
ATTEMPT = "runs/m1-base/task_1"


def _bench(root: Path, zipped: bool = False) -> Path:
    make_benchmark(root, tasks=[TASK], zipped=zipped)
    make_variant(root / "runs", "m1-base", "m/one", [
        (TASK, 1, {"task_1_c1": "pass", "task_1_c2": "fail"})])
    return root


def _edit_json(path: Path, change: Callable[[object], object]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text())), allow_nan=True))


def _set(path: str, *keys: object, value: object) -> Callable[[Path], None]:
    """Set one value deep in a JSON file of the benchmark."""
    def edit(root: Path) -> None:
        def change(data: object) -> object:
            target = data
            for key in keys[:-1]:
                target = target[key]  # type: ignore[index]
            target[keys[-1]] = value  # type: ignore[index]
            return data
        _edit_json(root / path, change)
    return edit


def _write(path: str, content: bytes) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(content)
    return edit


def _raw_tasks(text: str) -> Callable[[Path], None]:
    return _write("tasks_and_rubrics.json", text.encode())


def _duplicate_verifier(root: Path) -> None:
    def change(tasks: list) -> list:
        tasks[0]["rubric"][1]["verifier_id"] = tasks[0]["rubric"][0]["verifier_id"]
        return tasks
    _edit_json(root / "tasks_and_rubrics.json", change)


def _docx_with_broken_xml(root: Path) -> None:
    import io

    import docx

    document = docx.Document()
    document.add_paragraph("hello")
    buffer = io.BytesIO()
    document.save(buffer)
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(root / "worlds/world_a/filesystem/memo.docx", "w") as out:
        for info in source.infolist():
            out.writestr(info.filename, b"<w:document><unclosed"
                         if info.filename == "word/document.xml" else source.read(info))


def _xlsx_with_broken_xml(root: Path) -> None:
    import io

    import openpyxl

    book = openpyxl.Workbook()
    book.active["A1"] = 1
    buffer = io.BytesIO()
    book.save(buffer)
    source = zipfile.ZipFile(buffer)
    with zipfile.ZipFile(root / "worlds/world_a/filesystem/model.xlsx", "w") as out:
        for info in source.infolist():
            out.writestr(info.filename, b"<worksheet><unclosed"
                         if info.filename.endswith("sheet1.xml") else source.read(info))


ICS_BAD_DATE = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e1\r\n"
                b"DTSTART:tomorrow-ish\r\nSUMMARY:x\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
SPACE = "worlds/world_a/.apps_data/chat/Groups/Space AAA"
GRADES = f"{ATTEMPT}/grades.json"
TRAJECTORY = f"{ATTEMPT}/trajectory.json"

# (id, how the benchmark is broken, the file the line must name, the field it must name)
CASES = [
    ("weight_nan", _set("tasks_and_rubrics.json", 0, "rubric", 0, "weight", value=float("nan")),
     "tasks_and_rubrics.json", "[0].rubric[0].weight"),
    ("weight_infinity", _set("tasks_and_rubrics.json", 0, "rubric", 0, "weight",
                             value=float("inf")), "tasks_and_rubrics.json", "[0].rubric[0].weight"),
    ("weight_1e400", _raw_tasks(json.dumps([make_task()]).replace('"is_primary_objective"',
                                                                  '"weight": 1e400, '
                                                                  '"is_primary_objective"', 1)),
     "tasks_and_rubrics.json", "[0].rubric[0].weight"),
    ("duplicate_verifier_id", _duplicate_verifier, "tasks_and_rubrics.json",
     "[0].rubric[1].verifier_id"),
    ("lone_surrogate", _raw_tasks(json.dumps([make_task(prompt="budget \ud800?")])),
     "tasks_and_rubrics.json", "[0].prompt"),
    ("deep_json", _raw_tasks("[" * 100_000 + "]" * 100_000), "tasks_and_rubrics.json", None),
    ("broken_docx_xml", _docx_with_broken_xml, "memo.docx", None),
    ("broken_xlsx_xml", _xlsx_with_broken_xml, "model.xlsx", None),
    ("ics_dtstart_not_a_date", _write("worlds/world_a/.apps_data/calendar/work.ics", ICS_BAD_DATE),
     "work.ics", "DTSTART"),
    ("chat_messages_not_a_list", _write(f"{SPACE}/messages.json", b'{"messages": "hello"}'),
     "messages.json", "messages"),
    ("chat_creator_a_string", _write(f"{SPACE}/messages.json",
                                     b'{"messages": [{"creator": "Alice", "text": "hi"}]}'),
     "messages.json", "messages[0].creator"),
    ("results_csv_not_utf8", _write("runs/m1-base/results.csv", b"task_id,domain\n\xff\xfe,x\n"),
     "results.csv", None),
    ("failures_not_utf8", _write("runs/m1-base/results.failures.jsonl", b'{"task_id": "\xff"}\n'),
     "results.failures.jsonl", None),
    ("short_csv_row", _write("runs/m1-base/results.csv",
                             b"task_id,domain,world_id,agent_model\ntask_1,Law\n"),
     "results.csv", "row 1"),
    ("score_not_a_number", _set(GRADES, "verifier_results", 0, "score", value="abc"),
     "grades.json", "verifier_results[0].score"),
    ("verdict_maybe", _set(GRADES, "verifier_results", 0, "verifier_result_values",
                           "judge_grade", value="maybe"),
     "grades.json", "verifier_results[0].verifier_result_values.judge_grade"),
    ("verifier_values_a_string", _set(GRADES, "verifier_results", 0, "verifier_result_values",
                                      value="pass"),
     "grades.json", "verifier_results[0].verifier_result_values"),
    ("deep_trajectory", _write(TRAJECTORY, b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000
                               + b"}"), "trajectory.json", None),
    ("trajectory_messages_a_string", _set(TRAJECTORY, "messages", value="hello"),
     "trajectory.json", "messages"),
    ("trajectory_messages_not_objects", _set(TRAJECTORY, "messages", value=["hello", 3]),
     "trajectory.json", "messages[0]"),
    ("token_count_a_string", _set(TRAJECTORY, "usage", "total_tokens", value="many"),
     "trajectory.json", "usage.total_tokens"),
    ("time_elapsed_a_string", _set(TRAJECTORY, "time_elapsed", value="12 s"),
     "trajectory.json", "time_elapsed"),
]


def _world_zip(change: Callable[[bytes], bytes] | None = None,
               extra: dict[str, bytes] | None = None, **zip_options: int) -> Callable[[Path], None]:
    """The benchmark's world as a zip (built with `zip_options`), its bytes then `change`d."""
    def edit(root: Path) -> None:
        folder = root / "worlds" / "world_a"
        archive = root / "world_files_zipped" / "world_a.zip"
        archive.parent.mkdir(exist_ok=True)
        with zipfile.ZipFile(archive, "w", **zip_options) as zf:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zf.writestr(path.relative_to(folder).as_posix(), path.read_bytes() * 20)
            for name, data in (extra or {}).items():
                zf.writestr(name, data)
        if change is not None:
            archive.write_bytes(change(archive.read_bytes()))
        shutil.rmtree(folder)
    return edit


def _flip_byte_in(name: bytes) -> Callable[[bytes], bytes]:
    """Damage the compressed data of one entry (found by its name in the local header)."""
    def change(data: bytes) -> bytes:
        at = data.index(name) + len(name) + 40
        return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
    return change


def _encrypted(data: bytes) -> bytes:
    """Set the 'encrypted' flag of every entry, as a password-protected zip carries it."""
    out = bytearray(data)
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := out.find(signature, start)) != -1:
            out[start + flag_at] |= 1
            start += 4
    return bytes(out)


def _unknown_method(data: bytes) -> bytes:
    out = bytearray(data)
    for signature, method_at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        start = 0
        while (start := out.find(signature, start)) != -1:
            out[start + method_at:start + method_at + 2] = (99).to_bytes(2, "little")
            start += 4
    return bytes(out)


def _lying_world_zip(root: Path) -> None:
    """The world zipped, with an entry of 8 MB that declares 1,000 bytes."""
    _world_zip()(root)
    add_lying_entry(root / "world_files_zipped" / "world_a.zip", "filesystem/spaces.txt",
                    zipfile.ZIP_DEFLATED, 8)


def _linked(path: str) -> Callable[[Path], None]:
    """Replace a run file by a link to a file outside the runs (a secret's text)."""
    def edit(root: Path) -> None:
        secret = root.parent / "secret.txt"
        secret.write_text('{"messages": [], "output": "API_KEY=sk-live-123"}')
        (root / path).unlink()
        (root / path).symlink_to(secret)
    return edit


def _pipe(path: str) -> Callable[[Path], None]:
    """A named pipe where a run file is looked for (opening it would wait forever)."""
    def edit(root: Path) -> None:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / path)
    return edit


def _grades_folder_linked_out(root: Path) -> None:
    """An attempt's grades/ folder replaced by a link to a folder elsewhere (refused, as every
    link among an attempt's own files is)."""
    outside = root.parent / "elsewhere"
    outside.mkdir()
    (outside / "judge.json").write_text('{"judge_model": "API_KEY=sk-live-123"}')
    (root / ATTEMPT / "grades").symlink_to(outside, target_is_directory=True)


CASES += [
    ("attempt_file_a_link_out", _linked(TRAJECTORY), "trajectory.json", None),
    ("grades_folder_a_link_out", _grades_folder_linked_out, "grades: a symbolic link", None),
    ("judge_grades_a_named_pipe", _pipe(f"{ATTEMPT}/grades/judge.json"), "judge.json", None),
    ("zip_entry_expands_beyond_its_declared_size", _lying_world_zip, "world_a.zip",
     "filesystem/spaces.txt"),
    ("zip_crc_error", _world_zip(_flip_byte_in(b"notes.md"), compression=zipfile.ZIP_STORED),
     "world_a.zip", None),
    ("zip_truncated", _world_zip(lambda data: data[:len(data) // 2]), "world_a.zip", None),
    ("zip_encrypted", _world_zip(_encrypted), "world_a.zip", None),
    ("zip_unknown_method", _world_zip(_unknown_method), "world_a.zip", None),
    ("zip_file_and_folder_of_one_name", _world_zip(extra={"filesystem/docs": b"x"}),
     "world_a.zip", "filesystem/docs"),
]


@pytest.mark.parametrize(("break_it", "file", "field"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_unusable_input_is_one_line_and_exit_2(tmp_path: Path, break_it, file: str,
                                               field: str | None) -> None:
    root = _bench(tmp_path / "b")
    out = tmp_path / "out"
    assert runner.invoke(app, ["audit", str(root), "--out", str(out)]).exit_code == 0
    before = folder_contents(out)
    break_it(root)
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and file in line, line
    assert "internal error" not in line
    if field is not None:
        assert f": {field}: " in line, line
    assert folder_contents(out) == before


# The workspace reads documents only when the agent asks (a broken docx is then a tool error).
WORLD_CASES = [c for c in CASES if c[0].startswith(("zip_", "ics_", "chat_"))]


@pytest.mark.parametrize(("break_it", "file", "field"), [c[1:] for c in WORLD_CASES],
                         ids=[c[0] for c in WORLD_CASES])
def test_serve_refuses_an_unusable_world_in_one_line(tmp_path: Path, break_it, file: str,
                                                     field: str | None) -> None:
    root = _bench(tmp_path / "b")
    break_it(root)
    result = runner.invoke(app, ["serve", str(root), "task_1"])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and file in line, line


def test_every_number_option_has_a_ceiling() -> None:
    """No number option takes a value too large for what it reaches (SQLite, numpy, asyncio):
    each is a range with a maximum, so such a value is a usage error (exit 2)."""
    import typer.main

    def is_number(annotation: object) -> bool:
        return annotation in (int, float) or any(a in (int, float) for a in get_args(annotation))

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    numbers = [(f"{name} --{param.name}", param) for name, sub in commands.items()
               for param in sub.params if is_number(param.type_descriptor.annotation)]
    assert len(numbers) > 15
    assert not [name for name, param in numbers if getattr(param, "max", None) is None]


def test_a_huge_search_limit_is_a_usage_error(tmp_path: Path) -> None:
    root = _bench(tmp_path / "bench")
    assert runner.invoke(app, ["audit", str(root), "--out", str(tmp_path / "out")]).exit_code == 0
    result = runner.invoke(app, ["search", str(tmp_path / "out"), "budget",
                                 "--limit", str(10**20)])
    assert result.exit_code == 2 and "internal error" not in result.output


def test_a_file_is_read_in_memory_of_its_size_not_of_the_limit(tmp_path: Path) -> None:
    """read(n) allocates n bytes before it reads: a file of a few bytes read under the 100 MB
    limit must not cost 100 MB, and one over the limit is still refused by its size."""
    small = tmp_path / "small.json"
    small.write_text('{"a": 1}')
    tracemalloc.start()
    try:
        assert read_bytes(small) == b'{"a": 1}'
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    with pytest.raises(InputError, match="file too large: 8 bytes; the limit is 7"):
        read_bytes(small, 7)


def test_links_to_folders_in_a_run_folder_are_named_and_not_entered(tmp_path: Path) -> None:
    """A variant folder and a task folder that are links to folders elsewhere (whose attempts
    carry a secret): neither is read; the task's link is named in the source summary."""
    root = _bench(tmp_path / "b")
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "runs" / "m1-base", elsewhere / "variant")
    secret = elsewhere / "variant" / "task_1" / "trajectory.json"
    secret.write_text(secret.read_text().replace("The budget is 1.2m.", "API_KEY=sk-live-123"))
    (root / "runs" / "m2-linked").symlink_to(elsewhere / "variant", target_is_directory=True)
    shutil.move(root / ATTEMPT, elsewhere / "task_1")
    (root / ATTEMPT).symlink_to(elsewhere / "variant" / "task_1", target_is_directory=True)
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "m1-base/task_1/: a symbolic link to a folder, not followed" in result.output
    assert "m2-linked" not in result.output
    assert b"sk-live-123" not in (out / "audit.db").read_bytes()


def test_an_audit_that_meets_an_unreadable_stored_review_changes_nothing(tmp_path: Path) -> None:
    """A review row with a label this tool does not know (written by another program): the
    audit of changed runs is refused in one line, and neither audit.db nor a report changes
    (the new grades were committed before the reports read the reviews)."""
    import sqlite3

    root = _bench(tmp_path / "b")
    out = tmp_path / "out"
    assert runner.invoke(app, ["audit", str(root), "--out", str(out)]).exit_code == 0
    with sqlite3.connect(out / "audit.db") as db:
        db.execute("INSERT INTO reviews (reviewer, created_at, task_id, label, note, "
                   "evidence_hash) VALUES ('eve', '2025-01-01T00:00:00+00:00', 'task_1', "
                   "'pwned', '', '')")
    _set(f"{GRADES}", "verifier_results", 0, "score", value=0.0)(root)
    before = folder_contents(out)
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert "audit.db: reviews.label" in line, line
    assert folder_contents(out) == before


def test_a_deeply_nested_json_file_is_sniffed_in_memory_linear_in_its_size(tmp_path: Path) -> None:
    """Whether a run folder holds inspect_ai logs is decided by the top-level keys of its JSON
    files, streamed; the keys of one nested 100k deep cost 10 GB while their paths were kept."""
    import inspect_ai.log  # noqa: F401 (imported before the memory is traced: not the sniffing's)

    from rubric_audit.load.inspect_log import is_inspect_log

    (tmp_path / "deep.json").write_text('{"eval": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "run" / "t").mkdir(parents=True)
    (tmp_path / "run" / "t" / "trajectory.json").write_text(
        '{"messages": ' + "[" * 100_000 + "]" * 100_000 + "}")
    tracemalloc.start()
    try:
        assert not is_inspect_log(tmp_path / "run")
        assert is_inspect_log(tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20, peak


HOSTILE = "memo \x1b]52;c;cm0gLXJmIH4K\x07\x1b]0;pwned\x07\x1b[2J \u202eexe.txt [/] [link=file:///etc/passwd]x[/link]"


def test_stranger_text_reaches_the_terminal_as_text(tmp_path: Path) -> None:
    """A task name, domain, prompt and expected output holding OSC 52 (clipboard), a title,
    a screen clear, a bidi override and Rich markup: `tasks`, `show` and `audit` print them
    with every control visible and the markup as written (`[/]` crashed `show`)."""
    task = make_task(task_name=f"name {HOSTILE}", domain=HOSTILE, prompt=f"Why? {HOSTILE}",
                     expected_output=HOSTILE)
    root = tmp_path / "b"
    make_benchmark(root, tasks=[task])
    make_variant(root / "runs", f"m1{HOSTILE[:4]}", "m/one",
                 [(task, 1, {"task_1_c1": "pass", "task_1_c2": "fail"})])
    for args in (["tasks", str(root)], ["show", str(root), "task_1"],
                 ["audit", str(root), "--out", str(tmp_path / "out")]):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output, result.exception)
        assert "\x1b" not in result.output and "\u202e" not in result.output
        assert "\x07" not in result.output
    shown = runner.invoke(app, ["show", str(root), "task_1"]).output
    assert "\\x1b]52;c;cm0gLXJmIH4K\\x07" in shown and "[link=file:///etc/passwd]x[/link]" in shown
    assert "\\u202eexe.txt [/]" in shown


def _nested(folder: Path, depth: int) -> None:
    """`depth` folders one inside the other under `folder` (made relative to each, so the path
    is never spelled out whole), a file at the bottom."""
    folder.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(folder, os.O_RDONLY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=descriptor)
        inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, dir_fd=descriptor), "w") as fh:
        fh.write("deep")
    os.close(descriptor)


def _remove_nested(folder: Path, depth: int) -> None:
    """Remove what `_nested` made, bottom up through folder descriptors (shutil.rmtree, as
    pytest's own clean-up uses it, recurses per level and fails on such a tree)."""
    descriptors = [os.open(folder, os.O_RDONLY)]
    for _ in range(depth):
        descriptors.append(os.open("d", os.O_RDONLY, dir_fd=descriptors[-1]))
    os.unlink("deep.md", dir_fd=descriptors[-1])
    os.close(descriptors.pop())
    while descriptors:
        os.rmdir("d", dir_fd=descriptors[-1])
        os.close(descriptors.pop())


@pytest.mark.parametrize("where", ["runs/m1-base/task_1/deep", f"{ATTEMPT}/artifacts/deep",
                                   "worlds/world_a/filesystem/docs/deep", "deep"])
def test_a_tree_nested_1100_deep_is_walked_without_recursion(tmp_path: Path, where: str) -> None:
    """os.walk and Path.rglob recurse once per level (a RecursionError at about 1,000): every
    walk of a run folder, an artifacts folder, a world or a benchmark is iterative."""
    root = _bench(tmp_path / "b")
    _nested(root / where, 1100)
    try:
        result = runner.invoke(app, ["audit", str(root), "--out", str(tmp_path / "out")])
    finally:
        _remove_nested(root / where, 1100)
    assert result.exit_code == 0, (result.output, result.exception)


@pytest.mark.parametrize("where", ["worlds/world_a/filesystem/docs/\udcff.md",
                                   f"{ATTEMPT}/\udcff.txt", f"{ATTEMPT}/artifacts/\udcff.txt",
                                   "runs/m1-\udcff/task_1/trajectory.json"])
def test_a_name_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path, where: str) -> None:
    """A file or folder named with bytes that are no UTF-8 (os.fsdecode makes them lone
    surrogates, which neither a terminal nor SQLite can write): one line showing them escaped."""
    root = _bench(tmp_path / "b")
    target = root / where
    if "m1-\udcff" in where:
        (root / "runs" / "m1-base").rename(root / "runs" / "m1-\udcff")
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("x")
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert "\\udcff" in line and "not UTF-8" in line, line
    assert not out.exists()


def _attempt_folder_numbered(k: int) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        folder = root / ATTEMPT
        numbered = folder / f"attempt_{k}"
        numbered.mkdir()
        for file in folder.iterdir():
            if file != numbered:
                file.rename(numbered / file.name)
    return edit


def _number_of_digits(digits: int) -> Callable[[Path], None]:
    """A token count of `digits` nines (Python refuses int() past 4,300 digits, and ijson's C
    parser, asked for one, crashed the process)."""
    def edit(root: Path) -> None:
        path = root / TRAJECTORY
        path.write_text(path.read_text().replace('"prompt_tokens": 100',
                                                 f'"prompt_tokens": {"9" * digits}'))
    return edit


@pytest.mark.parametrize(("break_it", "file"), [
    (_attempt_folder_numbered(10**30), "attempt_1000000000000000000000000000000"),
    (_number_of_digits(5000), "trajectory.json")])
def test_a_number_too_large_to_store_is_refused_in_one_line(tmp_path: Path, break_it,
                                                            file: str) -> None:
    root = _bench(tmp_path / "b")
    break_it(root)
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and file in line, line
    assert not out.exists()


@pytest.mark.parametrize(("args", "named"), [(["bud\udcffget"], "QUERY"),
                                             (["budget", "--model", "\udcff"], "--model")])
def test_text_from_the_shell_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path, args,
                                                                     named: str) -> None:
    """Bytes from the shell that are no UTF-8 reach Python as lone surrogates (no query or
    terminal can take them): the argument or option is named in one line."""
    root = _bench(tmp_path / "bench")
    assert runner.invoke(app, ["audit", str(root), "--out", str(tmp_path / "out")]).exit_code == 0
    result = runner.invoke(app, ["search", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, (result.output, result.exception)
    assert result.stderr.strip() == f"error: {named}: not UTF-8 text"


def test_the_loser_of_two_audits_racing_into_one_new_out_says_so(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """Two audits into the same new OUT: each builds a staging folder; the second to rename
    it into place finds OUT written (an OSError before) and says so, leaving the winner's."""
    import rubric_audit.audit.stages

    root = _bench(tmp_path / "b")
    out = tmp_path / "out"
    remove_stale = rubric_audit.audit.stages._remove_stale_staging

    def other_audit_finishes_meanwhile(folder: Path) -> None:
        remove_stale(folder)
        folder.mkdir()
        (folder / "audit.json").write_text("{}")

    monkeypatch.setattr(rubric_audit.audit.stages, "_remove_stale_staging",
                        other_audit_finishes_meanwhile)
    result = runner.invoke(app, ["audit", str(root), "--out", str(out)])
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.strip().splitlines()
    assert line == f"error: {out}: another audit wrote this folder first (while this one ran); " \
                   "run again to update it"
    assert [p.name for p in out.iterdir()] == ["audit.json"]
    assert [p.name for p in tmp_path.iterdir()] == ["b", "out"]  # no staging folder left


HARBOR_JOB = (Path(__file__).parent / "fixtures" / "harbor-jobs" / "CodeContextBench" / "runs"
              / "official" / "csb_sdlc_understand_haiku_20260303_140132" / "mcp-remote-direct"
              / "2026-03-03__14-02-00")


def test_a_harbor_or_tb_folder_name_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    """Harbor's and tb's walks store the trial and task folder names they find: one not UTF-8
    is refused naming it (Harbor's crashed serialising it)."""
    from tests.conftest import make_tb_run, tb_trial

    job = tmp_path / "job"
    shutil.copytree(HARBOR_JOB, job)
    trial = next(p for p in job.iterdir() if p.is_dir())
    trial.rename(job / f"{trial.name}\udcff")
    tb = make_tb_run(tmp_path / "tb", "run-1", [tb_trial("hello-world", "run-1")])
    task = next(p for p in tb.iterdir() if p.is_dir())
    task.rename(tb / "hello\udcff")
    for runs in (job, tb):
        result = runner.invoke(app, ["audit", str(runs), "--out", str(tmp_path / "out")])
        assert result.exit_code == 2, (runs, result.output, result.exception)
        [line] = result.stderr.strip().splitlines()
        assert "\\udcff: name is not UTF-8" in line, line


def test_a_strangers_key_in_a_field_path_stays_one_line() -> None:
    """A key holding a newline (found by the loader fuzz in an inspect log's scores) is quoted
    in the error line, as a dot or a space would be: the line stays one line."""
    from rubric_audit.core.errors import field_path

    assert field_path("samples[0]", ("scores", "\n", "value")) == "samples[0].scores['\\n'].value"
    assert field_path("", ("a.b", 3, "c")) == "['a.b'][3].c"
