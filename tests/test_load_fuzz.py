"""Fuzzing the loaders: whatever a benchmark or run file holds, nothing but InputError escapes.

Each example replaces one value deep inside one JSON file of a small valid benchmark with recorded
runs (or one world file or workspace snapshot with arbitrary bytes) and loads everything the audit
loads, the attempts' artifacts included; or one value of an Archipelago task package; or changes a
Harbor job, a Terminal-Bench 1 run, or an inspect_ai log inspect_ai wrote (a value inside a .eval
entry or a .json log, an entry's bytes, the .eval archive's own bytes, a bundle folder's logs or
listing), and loads that.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubric_audit.core.errors import InputError
from rubric_audit.core.model import ESCAPED, LONG_ID_MARK, MAX_ID_BYTES, path_safe, safe_id
from rubric_audit.grade.judge import artifacts_text
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from rubric_audit.load.sources import load_sources
from rubric_audit.load.world import load_task_world
from tests.conftest import (
    FIXTURES,
    PACKAGE_TASK,
    PACKAGE_TASK_WITHOUT_CONFIG,
    eval_entries,
    make_benchmark,
    make_task,
    make_task_package,
    make_tb_run,
    make_variant,
    tb_trial,
    write_eval,
    write_json,
)

TASK = make_task()
JSON_FILES = [
    "tasks_and_rubrics.json", "world_descriptions.json",
    "worlds/world_a/.apps_data/chat/Groups/Space AAA/messages.json",
    "worlds/world_a/.apps_data/chat/Groups/Space AAA/group_info.json",
    *(f"runs/m1-base/task_1/{name}" for name in (
        "trajectory.json", "grades.json", "verifiers.json", "initial_messages.json",
        "grading_settings.json", "orchestrator_config.json", "agent_config.json")),
]
RAW_FILES = ["worlds/world_a/.apps_data/mail/inbox.mbox",
             "worlds/world_a/.apps_data/calendar/work.ics", "runs/m1-base/results.csv",
             "runs/m1-base/results.failures.jsonl", "worlds/world_a/filesystem/docs/notes.docx",
             "runs/m1-base/task_1/final_snapshot.zip", "runs/m1-base/task_1/original_snapshot.zip"]
PACKAGE_FILES = [f"tasks/{PACKAGE_TASK}.json", f"tasks/{PACKAGE_TASK_WITHOUT_CONFIG}.json",
                 f"grader/configs/{PACKAGE_TASK}_grading_config.json"]

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=3),
    max_leaves=8)


@pytest.fixture(scope="module")
def pristine() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        root = make_benchmark(Path(tmp) / "b", tasks=[TASK])
        attempt = make_variant(root / "runs", "m1-base", "m/one", [
            (TASK, 1, {"task_1_c1": "pass", "task_1_c2": "fail"})]) / "task_1"
        write_json(attempt / "orchestrator_config.json", {"model": "m/own", "extra_args": {}})
        write_json(attempt / "agent_config.json", {"agent_config_id": "loop_agent"})
        for name, files in (("original_snapshot.zip", {"filesystem/a.md": "1"}),
                            ("final_snapshot.zip", {"filesystem/a.md": "2", "filesystem/b.md": "3"})):
            with zipfile.ZipFile(attempt / name, "w") as zf:
                for entry, text in files.items():
                    zf.writestr(entry, text)
        yield root


def _places(data: Any, where: tuple = ()) -> list[tuple]:
    """Every path to a value inside parsed JSON, the top level included."""
    found = [where]
    if isinstance(data, dict):
        for key, item in data.items():
            found += _places(item, (*where, key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found += _places(item, (*where, i))
    return found


def _replaced(data: Any, where: tuple, value: Any) -> Any:
    if not where:
        return value
    *head, last = where
    target = data
    for key in head:
        target = target[key]
    target[last] = value
    return data


def _load_everything(root: Path) -> None:
    try:
        bench = load_benchmark(root)
        for task in bench.tasks:
            load_task_world(bench, task)
        for attempt in load_runs([root / "runs"]).attempts:
            artifacts_text(attempt)
    except InputError:
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(JSON_FILES), draw=st.data(), value=values)
def test_any_json_value_anywhere_is_usable_or_an_input_error(pristine: Path, file: str,
                                                              draw: st.DataObject,
                                                              value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(shutil.copytree(pristine, Path(tmp) / "b"))
        data = json.loads((root / file).read_text())
        changed = _replaced(data, draw.draw(st.sampled_from(_places(data))), value)
        (root / file).write_text(json.dumps(changed, allow_nan=True))
        _load_everything(root)


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(RAW_FILES + JSON_FILES), data=st.binary(max_size=300))
def test_any_bytes_in_a_file_are_usable_or_an_input_error(pristine: Path, file: str,
                                                          data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(shutil.copytree(pristine, Path(tmp) / "b"))
        (root / file).write_bytes(data)
        _load_everything(root)


@pytest.fixture(scope="module")
def pristine_package() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        yield make_task_package(Path(tmp) / "p")


@settings(max_examples=100, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(PACKAGE_FILES), draw=st.data(), value=values)
def test_any_value_in_a_task_package_is_usable_or_an_input_error(pristine_package: Path,
                                                                 file: str, draw: st.DataObject,
                                                                 value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(shutil.copytree(pristine_package, Path(tmp) / "p"))
        data = json.loads((root / file).read_text())
        changed = _replaced(data, draw.draw(st.sampled_from(_places(data))), value)
        (root / file).write_text(json.dumps(changed, allow_nan=True))
        _load_everything(root)


HARBOR_JOB = (FIXTURES / "harbor-jobs" / "CodeContextBench" / "archive"
              / "validation_smoke_ccb_dependeval" / "2026-02-01__18-03-04")
TERMINUS = FIXTURES / ("harbor-jobs/harbor/tests/golden/terminus_2/"
                       "hello-world-invalid-json.trajectory.json")
FINISHED_TRIAL = "dependency_recognition-java-unkn__pshKMge"
UNFINISHED_TRIAL = "dependency_recognition-java-unkn__int0002"
HARBOR_FILES = ["result.json", "config.json", f"{FINISHED_TRIAL}/result.json",
                f"{FINISHED_TRIAL}/agent/trajectory.json", f"{UNFINISHED_TRIAL}/config.json",
                f"{UNFINISHED_TRIAL}/agent/trajectory.json"]
HARBOR_RAW_FILES = [f"{UNFINISHED_TRIAL}/exception.txt", f"{UNFINISHED_TRIAL}/trial.log",
                    f"{FINISHED_TRIAL}/verifier/test-stdout.txt"]


@contextlib.contextmanager
def _harbor_job() -> Iterator[Path]:
    """The real job, with an ATIF trajectory (Harbor's own terminus-2 one) in its trial and a
    second trial the job left unfinished (config.json, trial.log, exception.txt, trajectory)."""
    from tests.test_load_harbor import interrupted

    with tempfile.TemporaryDirectory() as tmp:
        job = Path(shutil.copytree(HARBOR_JOB, Path(tmp) / "job"))
        (job / FINISHED_TRIAL / "agent").mkdir()
        shutil.copy(TERMINUS, job / FINISHED_TRIAL / "agent" / "trajectory.json")
        interrupted(job, "dependency_recognition-java-unknown", n=2,
                    traceback="Traceback (most recent call last):\nCancelledError\n")
        yield job


@settings(max_examples=100, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(HARBOR_FILES), draw=st.data(), value=values)
def test_any_value_in_a_harbor_job_is_usable_or_an_input_error(file: str, draw: st.DataObject,
                                                                value: Any) -> None:
    with _harbor_job() as job:
        data = json.loads((job / file).read_text())
        changed = _replaced(data, draw.draw(st.sampled_from(_places(data))), value)
        (job / file).write_text(json.dumps(changed, allow_nan=True))
        with contextlib.suppress(InputError):
            load_sources([job])


@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(HARBOR_FILES + HARBOR_RAW_FILES), data=st.binary(max_size=300))
def test_any_bytes_in_a_harbor_file_are_usable_or_an_input_error(file: str, data: bytes) -> None:
    with _harbor_job() as job:
        (job / file).parent.mkdir(parents=True, exist_ok=True)
        (job / file).write_bytes(data)
        with contextlib.suppress(InputError):
            load_sources([job])


TB_FILES = ["results.json", "run_metadata.json", "tb.lock", "fix-git/fix-git.1-of-2.r1/results.json"]


@pytest.fixture(scope="module")
def tb_run() -> Iterator[Path]:
    """A run with every kind of trial: solved, failed, tests timed out, failed around by the
    harness (only in the run's results.json), and one the run stopped during (a folder only)."""
    with tempfile.TemporaryDirectory() as tmp:
        run = make_tb_run(Path(tmp), "r1", [
            tb_trial("fix-git", "r1", k=1, n=2),
            tb_trial("fix-git", "r1", k=2, n=2, resolved=False),
            tb_trial("oom", "r1", resolved=None, failure_mode="test_timeout"),
            tb_trial("eval-mteb", "r1", resolved=None, failure_mode="unknown_agent_error",
                     ran=False)])
        (run / "qemu-startup" / "qemu-startup.1-of-2.r1").mkdir(parents=True)
        yield run


@settings(max_examples=100, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(TB_FILES), draw=st.data(), value=values)
def test_any_value_in_a_tb_run_is_usable_or_an_input_error(tb_run: Path, file: str,
                                                           draw: st.DataObject,
                                                           value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(shutil.copytree(tb_run, Path(tmp) / "r1"))
        data = json.loads((run / file).read_text())
        changed = _replaced(data, draw.draw(st.sampled_from(_places(data))), value)
        (run / file).write_text(json.dumps(changed, allow_nan=True))
        _loads_or_refuses_in_one_line(run)


@settings(max_examples=40, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(file=st.sampled_from(TB_FILES), data=st.binary(max_size=300))
def test_any_bytes_in_a_tb_run_file_are_usable_or_an_input_error(tb_run: Path, file: str,
                                                                 data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(shutil.copytree(tb_run, Path(tmp) / "r1"))
        (run / file).write_bytes(data)
        _loads_or_refuses_in_one_line(run)


def _loads_or_refuses_in_one_line(path: Path) -> None:
    try:
        load_sources([path])
    except InputError as exc:
        assert "\n" not in str(exc), str(exc)  # the CLI prints it as its one line


@pytest.fixture(scope="module")
def eval_log(written_logs: list[Path]) -> Path:
    [path] = [p for p in written_logs if p.suffix == ".eval"]
    return path


def _replaced_somewhere(draw: st.DataObject, raw: bytes, value: Any) -> bytes:
    """JSON text with one value replaced, at a place reached by walking down from the top (at
    each step stopping or entering one child): the small fields the loader reads are as likely
    as the many places inside a sample's events."""
    data = json.loads(raw)
    where: tuple = ()
    inside = data
    while isinstance(inside, (dict, list)) and inside:
        key = draw.draw(st.sampled_from([None, *(inside if isinstance(inside, dict)
                                                 else range(len(inside)))]))
        if key is None:
            break
        where, inside = (*where, key), inside[key]
    return json.dumps(_replaced(data, where, value), allow_nan=True).encode()


EVAL_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@EVAL_SETTINGS
@given(draw=st.data(), value=values)
def test_any_value_in_an_eval_log_is_usable_or_an_input_error(eval_log: Path,
                                                              draw: st.DataObject,
                                                              value: Any) -> None:
    entries = eval_entries(eval_log)
    picked = draw.draw(st.sampled_from([i for i, (info, _) in enumerate(entries)
                                        if info.filename.endswith(".json")]))
    info, raw = entries[picked]
    entries[picked] = (info, _replaced_somewhere(draw, raw, value))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / eval_log.name
        write_eval(path, entries)
        _loads_or_refuses_in_one_line(path)


@EVAL_SETTINGS
@given(draw=st.data(), value=values)
def test_any_value_in_a_json_log_is_usable_or_an_input_error(written_logs: list[Path],
                                                             draw: st.DataObject,
                                                             value: Any) -> None:
    [log] = [p for p in written_logs if p.suffix == ".json"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / log.name
        path.write_bytes(_replaced_somewhere(draw, log.read_bytes(), value))
        _loads_or_refuses_in_one_line(path)


@EVAL_SETTINGS
@given(draw=st.data(), data=st.binary(max_size=300))
def test_any_bytes_in_an_eval_entry_are_usable_or_an_input_error(eval_log: Path,
                                                                 draw: st.DataObject,
                                                                 data: bytes) -> None:
    entries = eval_entries(eval_log)
    picked = draw.draw(st.sampled_from(range(len(entries))))
    entries[picked] = (entries[picked][0], data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / eval_log.name
        write_eval(path, entries)
        _loads_or_refuses_in_one_line(path)


@EVAL_SETTINGS
@given(draw=st.data(), data=st.binary(min_size=1, max_size=16), cut=st.booleans())
def test_a_damaged_eval_archive_is_usable_or_an_input_error(eval_log: Path, draw: st.DataObject,
                                                            data: bytes, cut: bool) -> None:
    """Bytes of the archive itself overwritten (compressed data, headers, the directory), or the
    archive cut short there (a log still being written)."""
    archive = eval_log.read_bytes()
    at = draw.draw(st.integers(0, len(archive) - 1))
    damaged = archive[:at] if cut else archive[:at] + data + archive[at + len(data):]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / eval_log.name
        path.write_bytes(damaged)
        _loads_or_refuses_in_one_line(path)


@EVAL_SETTINGS
@given(draw=st.data(), value=values, in_listing=st.booleans())
def test_any_value_in_a_bundle_folder_is_usable_or_an_input_error(
        written_logs: list[Path], measured_logs: list[Path], draw: st.DataObject, value: Any,
        in_listing: bool) -> None:
    """A folder as `inspect view bundle` publishes it: a .eval log, a .json log whose scores are
    measurements (win rates, counts, ratings) and the logs.json listing of their headers, with a
    value replaced in the .json log or in the listing."""
    [eval_log] = [p for p in written_logs if p.suffix == ".eval"]
    [json_log] = [p for p in measured_logs if p.suffix == ".json"]
    header = {k: v for k, v in json.loads(json_log.read_text()).items() if k != "samples"}
    listing = json.dumps({eval_log.name: header, json_log.name: header}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "site" / "logs"
        logs.mkdir(parents=True)
        shutil.copy(eval_log, logs / eval_log.name)
        (logs / "index.html").write_text("<html></html>")
        (logs / "logs.json").write_bytes(_replaced_somewhere(draw, listing, value) if in_listing
                                         else listing)
        (logs / json_log.name).write_bytes(json_log.read_bytes() if in_listing else
                                           _replaced_somewhere(draw, json_log.read_bytes(), value))
        _loads_or_refuses_in_one_line(Path(tmp) / "site")


def _unescaped(task_id: str) -> str:
    """The name a short `safe_id` was made from (its escape reverses)."""
    if task_id == "%":
        return ""
    raw, i = bytearray(), 0
    while i < len(task_id):
        if task_id[i] == "%":
            raw.append(int(task_id[i + 1:i + 3], 16))
            i += 3
        else:
            raw += task_id[i].encode("utf-8")
            i += 1
    return raw.decode("utf-8", "surrogatepass")


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(exclude_categories=()), max_size=80),
       st.text(st.characters(exclude_categories=()), max_size=300))
def test_safe_ids_are_path_safe_and_no_two_names_share_one(short: str, any_length: str) -> None:
    """Any name's id is one path-safe name; a short one reads back as its name (so two names
    never share it) and a name already safe is its own id; a long one holds the hash mark."""
    for name in (short, any_length):
        task_id = path_safe(safe_id(name))
        if LONG_ID_MARK not in task_id:
            assert _unescaped(task_id) == name
        if task_id != name:  # only a name that needed an escape, or is too long for one id
            assert (set(name) & set(ESCAPED) or not name.isprintable() or name in ("", ".", "..")
                    or len(name.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES)
