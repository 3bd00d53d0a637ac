"""The benchmark loaders (APEX, zipped and unzipped; Archipelago task packages) and what they
refuse."""

from __future__ import annotations

import shutil
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from rubric_audit.core.errors import MAX_FILE_BYTES, InputError
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.world import load_task_world, load_worlds
from tests.conftest import (
    FIXTURES,
    PACKAGE_TASK,
    PACKAGE_TASK_WITHOUT_CONFIG,
    add_lying_entry,
    make_benchmark,
    make_task,
    make_task_package,
    write_json,
)


@pytest.mark.parametrize("zipped", [False, True])
def test_loads_generated_benchmark(tmp_path: Path, zipped: bool) -> None:
    bench = load_benchmark(make_benchmark(tmp_path / "b", zipped=zipped))
    task = bench.task("task_1")
    assert task is not None and bench.task("name_task_1") is task
    assert [c.text for c in task.criteria] == ["States the budget is 1.2m",
                                               "Mentions the budget review meeting"]
    assert task.criteria[0].primary and task.criteria[0].explanation == "From Alice's mail."
    assert task.gold is not None and task.gold.text.startswith("The revised budget")
    source = bench.world("world_a").source
    assert source == ("world_files_zipped/world_a.zip" if zipped else "worlds/world_a")
    world = load_task_world(bench, task)
    assert [f.path for f in world.files] == ["docs/notes.md"]
    assert world.files[0].text == "Budget notes: draft 1.0m.\n"
    assert [m.subject for m in world.mail] == ["Budget numbers", "Re: Budget numbers"]
    assert world.mail[1].in_reply_to == "<m1@firm.test>"
    assert [e.summary for e in world.events] == ["Budget review"]
    assert world.events[0].attendees == ["alice@firm.test"]
    assert [(s.name, len(s.messages)) for s in world.chat] == [("Budget team", 1)]


def test_a_task_is_found_by_id_or_name_first_come_and_a_copy_finds_its_own(
        tmp_path: Path) -> None:
    # one task's name is another's id, and two tasks share a name: the first in order wins
    bench = load_benchmark(make_benchmark(tmp_path / "b", tasks=[
        make_task("task_1", task_name="task_2"), make_task("task_2", task_name="shared"),
        make_task("task_3", task_name="shared")]))
    first, second, third = bench.tasks
    assert (bench.task("task_1"), bench.task("task_2"), bench.task("task_3")) == (
        first, first, third)
    assert bench.task("shared") is second and bench.task("name_task_1") is None
    copy = bench.model_copy(update={"tasks": [third]})
    assert copy.task("shared") is third and copy.task("task_1") is None
    assert bench.task("shared") is second and bench.model_copy().task("task_1") is first
    assert bench == load_benchmark(tmp_path / "b")  # looked up or not, equal


def test_zip_with_wrapping_folder_and_apps_data_spelling(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    folder = root / "worlds" / "world_a"
    (folder / ".apps_data").rename(folder / "apps_data")
    wrapper = tmp_path / "wrap"
    shutil.copytree(folder, wrapper / "world_a")
    (root / "world_files_zipped").mkdir()
    shutil.make_archive(str(root / "world_files_zipped" / "world_a"), "zip", wrapper)
    shutil.rmtree(root / "worlds")
    bench = load_benchmark(root)
    world = load_task_world(bench, bench.tasks[0])
    assert len(world.mail) == 2 and len(world.files) == 1


def test_task_overlay_is_laid_over_the_world(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(task_input_files=True)])
    overlay = root / "task_files" / "task_1" / "filesystem" / "docs"
    overlay.mkdir(parents=True)
    (overlay / "notes.md").write_text("Overlay notes.\n")
    (overlay / "extra.csv").write_text("a,b\n1,2\n")
    bench = load_benchmark(root)
    assert bench.tasks[0].overlay == "task_files/task_1"
    files = {f.path: f.text for f in load_task_world(bench, bench.tasks[0]).files}
    assert files == {"docs/extra.csv": "a,b\n1,2\n", "docs/notes.md": "Overlay notes.\n"}


def test_worlds_are_parsed_once_and_shared_by_their_tasks(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(task_id=f"task_{i}") for i in (1, 2, 3)])
    overlay = root / "task_files" / "task_3" / "filesystem" / "docs"
    overlay.mkdir(parents=True)
    (overlay / "notes.md").write_text("Overlay notes.\n")
    bench = load_benchmark(root)
    worlds = load_worlds(bench)
    for task in bench.tasks:
        assert worlds[task.id] == load_task_world(bench, task)
    assert worlds["task_1"] is worlds["task_2"]
    assert worlds["task_3"].files[0].text == "Overlay notes.\n"
    assert all(a is b for a, b in zip(worlds["task_3"].mail, worlds["task_1"].mail, strict=True))


def test_file_gold_lists_gold_files(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b", tasks=[make_task(gold_response_type="file",
                                                           gold_response="")])
    write_json(root / "gold_files" / "task_1" / "answer.json", {"x": 1})
    gold = load_benchmark(root).tasks[0].gold
    assert gold.type == "file" and gold.files == ["gold_files/task_1/answer.json"]


def _refused(root: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        load_benchmark(root)
    return caught.value


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    (root / "tasks_and_rubrics.json").write_text('[{"task_id": "t",\n  oops}]')
    error = _refused(root)
    assert error.file.endswith("tasks_and_rubrics.json") and "line 2" in error.problem


def test_missing_required_field_names_it(tmp_path: Path) -> None:
    task = make_task()
    del task["prompt"]
    error = _refused(make_benchmark(tmp_path / "b", tasks=[task]))
    assert (error.field, error.problem) == ("[0].prompt", "missing required field")


def test_missing_criterion_text_names_it(tmp_path: Path) -> None:
    task = make_task()
    del task["rubric"][1]["criteria"]
    assert _refused(make_benchmark(tmp_path / "b", tasks=[task])).field == "[0].rubric[1].criteria"


def test_duplicate_task_id_is_refused(tmp_path: Path) -> None:
    error = _refused(make_benchmark(tmp_path / "b", tasks=[make_task(), make_task()]))
    assert error.field == "[1].task_id" and "duplicate task_id 'task_1' (first at [0])" in str(error)


def test_zip_that_is_not_a_zip_is_refused(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    shutil.rmtree(root / "worlds")
    (root / "world_files_zipped").mkdir()
    (root / "world_files_zipped" / "world_a.zip").write_text("not a zip")
    error = _refused(root)
    assert error.file.endswith("world_a.zip") and error.problem == "not a zip archive"


def test_not_a_benchmark_directory_names_every_layout(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()  # half a task package: no grader/configs/, no task file
    problem = _refused(tmp_path).problem
    assert "tasks_and_rubrics.json" in problem and "tasks/*.json and grader/configs/" in problem


def test_corrupt_calendar_is_named(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    (root / "worlds/world_a/.apps_data/calendar/work.ics").write_text("BEGIN:VCALENDAR\nnonsense")
    bench = load_benchmark(root)
    with pytest.raises(InputError, match=r"work\.ics"):
        load_task_world(bench, bench.tasks[0])


def _zipped_world(root: Path, extra: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    """The benchmark's world as a zip, with `extra` entries written as named (no checks)."""
    archive = root / "world_files_zipped" / "world_a.zip"
    archive.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(archive, "w", method) as zf:
        for path in sorted((root / "worlds" / "world_a").rglob("*")):
            if path.is_file():
                zf.write(path, path.relative_to(root / "worlds" / "world_a").as_posix())
        for name, data in extra.items():
            zf.writestr(zipfile.ZipInfo(name), data)
    shutil.rmtree(root / "worlds")
    return archive


@pytest.mark.parametrize("name", ["filesystem/../../../../ESCAPED", "/ESCAPED",
                                  "filesystem/..\\..\\ESCAPED", "../ESCAPED"])
def test_zip_entry_that_leaves_the_world_is_refused(tmp_path: Path, name: str) -> None:
    root = make_benchmark(tmp_path / "b")
    archive = _zipped_world(root, {name: b"pwned"})
    bench = load_benchmark(root)
    with pytest.raises(InputError) as caught:
        load_task_world(bench, bench.tasks[0])
    assert caught.value.file == str(archive) and caught.value.field == name
    assert "outside" in caught.value.problem and "world 'world_a'" in caught.value.problem


def test_zip_bomb_is_refused_by_declared_size_before_reading(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    archive = _zipped_world(root, {})
    with zipfile.ZipFile(archive, "a", zipfile.ZIP_DEFLATED) as zf, \
            zf.open("filesystem/zeros.csv", "w", force_zip64=True) as entry:
        chunk = bytes(2**20)
        for _ in range(200):
            entry.write(chunk)
    assert archive.stat().st_size < 2**20  # 200 MB of zeros in well under 1 MB
    bench = load_benchmark(root)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="zip entry too large") as caught:
            load_task_world(bench, bench.tasks[0])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.field == "filesystem/zeros.csv"
    assert peak < 5 * 2**20


def test_entry_that_expands_too_much_is_refused(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    _zipped_world(root, {})
    archive = root / "world_files_zipped" / "world_a.zip"
    with zipfile.ZipFile(archive, "a", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("filesystem/zeros.txt", bytes(20 * 2**20))
    bench = load_benchmark(root)
    with pytest.raises(InputError, match=r"expands [0-9,]+ times"):
        load_task_world(bench, bench.tasks[0])


METHODS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


@pytest.mark.parametrize("method", METHODS)
def test_a_world_zipped_by_any_method_loads_as_its_folder_does(tmp_path: Path,
                                                               method: int) -> None:
    root = make_benchmark(tmp_path / "b")
    bench = load_benchmark(root)
    unzipped = load_task_world(bench, bench.tasks[0])
    _zipped_world(root, {}, method)
    bench = load_benchmark(root)
    assert load_task_world(bench, bench.tasks[0]) == unzipped


@pytest.mark.parametrize("method", METHODS)
def test_entry_that_expands_beyond_its_declared_size_is_refused(tmp_path: Path,
                                                                method: int) -> None:
    root = make_benchmark(tmp_path / "b")
    archive = _zipped_world(root, {}, method)
    add_lying_entry(archive, "filesystem/spaces.txt", method, 2)
    bench = load_benchmark(root)
    with pytest.raises(InputError) as caught:
        load_task_world(bench, bench.tasks[0])
    assert (caught.value.file, caught.value.field) == (str(archive), "filesystem/spaces.txt")
    assert caught.value.problem.startswith(
        "zip entry expands beyond its declared size (1,000 bytes)")


def test_entry_that_lies_about_its_size_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """Python's zip reader inflates a whole entry before cutting it to its declared size: 128 MB
    of spaces declaring 1,000 bytes, in a zip of about 128 KB."""
    root = make_benchmark(tmp_path / "b")
    archive = _zipped_world(root, {})
    add_lying_entry(archive, "filesystem/spaces.txt", zipfile.ZIP_DEFLATED, 128)
    assert archive.stat().st_size < 2**20
    bench = load_benchmark(root)
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match="expands beyond its declared size"):
            load_task_world(bench, bench.tasks[0])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20


def test_a_path_that_is_both_file_and_folder_is_refused(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    _zipped_world(root, {"filesystem/docs/notes.md/inner.txt": b"x"})
    bench = load_benchmark(root)
    with pytest.raises(InputError, match="both a file and a folder") as caught:
        load_task_world(bench, bench.tasks[0])
    assert caught.value.field == "filesystem/docs/notes.md"


@pytest.mark.parametrize("task_id", ["aaaa/../../../../ESCAPED", "..", "a\\b", "tab\there",
                                     "x" * 201])
def test_task_id_that_is_not_one_folder_name_is_refused(tmp_path: Path, task_id: str) -> None:
    root = make_benchmark(tmp_path / "b", [make_task(task_id)])
    error = _refused(root)
    assert error.field == "[0].task_id" and "not usable as a folder name" in error.problem


def test_world_id_that_is_not_one_folder_name_is_refused(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    write_json(root / "world_descriptions.json", [{"world_id": "../../w"}])
    error = _refused(root)
    assert error.field == "[0].world_id"


def test_world_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "filesystem").mkdir()
    (secret / "filesystem" / "key.txt").write_text("private")
    (root / "task_files").mkdir()
    (root / "task_files" / "task_1").symlink_to(secret)
    bench = load_benchmark(root)
    with pytest.raises(InputError, match="symbolic link"):
        load_task_world(bench, bench.tasks[0])


def test_a_huge_file_is_refused_by_its_size_before_reading(tmp_path: Path) -> None:
    root = make_benchmark(tmp_path / "b")
    with (root / "tasks_and_rubrics.json").open("r+b") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: 100 MB that take no disk
    tracemalloc.start()
    try:
        error = _refused(root)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert error.problem.startswith("file too large") and peak < 2**20


LAW_428 = FIXTURES / "archipelago-examples" / "world-export-law-428"


def test_archipelagos_published_task_package_is_a_benchmark_without_world_files() -> None:
    bench = load_benchmark(LAW_428)
    assert len(bench.tasks) == 24 and sum(len(t.criteria) for t in bench.tasks) == 59
    [world] = bench.worlds
    assert (world.id, world.name, world.source, world.layout) == (
        "world_16183419ead2404e9dd046a3622fcb18", "Law World 428", None, "task-package")
    task = bench.task("World428_RO_01")
    assert task is not None and task.id == "task_b6d91b4092a142298691d69fe95e42c3"
    [criterion] = task.criteria
    assert criterion.id == "ver_584e2298bac74d73b4281f43c1569566" and criterion.primary
    assert criterion.text.startswith("States the amount of the good faith deposit")
    assert criterion.explanation.startswith("Pursuant to Section 3.1")
    criteria = [c for t in bench.tasks for c in t.criteria]
    assert sum(bool(c.explanation) for c in criteria) == 58  # one is null in its grader config
    assert all(c.weight == 1 and c.primary for c in criteria)
    assert task.gold is not None and "$8,200" in task.gold.text
    assert [f.path for f in load_task_world(bench, task).files] == ["ENA Expenses.xlsx"]
    golds = [t.gold.type for t in bench.tasks if t.gold]
    assert golds.count("file") == 1 and golds.count("text") == 23


def test_a_task_package_lays_the_world_and_each_tasks_own_files_out_as_apex_does(
        tmp_path: Path) -> None:
    bench = load_benchmark(make_task_package(tmp_path / "p"))
    one, two = bench.task("task_1"), bench.task(PACKAGE_TASK_WITHOUT_CONFIG)
    assert one is not None and two is not None and bench.worlds[0].source == "files"
    assert one.prompt == "What is the revised budget?\n\nUse the memo."
    assert [(c.id, c.text, c.explanation, c.weight, c.primary) for c in one.criteria] == [
        (f"{PACKAGE_TASK}_c1", "States the budget is 1.2m", "From Alice's mail.", 2.0, True),
        (f"{PACKAGE_TASK}_c2", "Mentions the budget review meeting", "", 1.0, False)]
    assert [(c.id, c.text, c.weight) for c in two.criteria] == [("ver_abc", "Replies to Alice.",
                                                               3.0)]
    assert two.gold is not None and two.gold.type == "file" and not two.gold.files
    own = load_task_world(bench, one)
    assert [f.path for f in own.files] == ["docs/notes.md", "memo.md"]
    assert [m.subject for m in own.mail] == ["Budget numbers", "Re: Budget numbers"]
    assert [e.summary for e in own.events] == ["Budget review"]
    other = load_task_world(bench, two)  # the first task's own files and data are its own
    assert [f.path for f in other.files] == ["docs/notes.md"] and other.events == []


@pytest.mark.parametrize(("file", "change", "field"), [
    ("tasks/{task}.json", {"prompt": 3}, "prompt"),
    ("tasks/{task}.json", {"prompt": "x", "extra": {"task_id": "../up"}}, "extra.task_id"),
    ("grader/configs/{task}_grading_config.json",
     {"verifiers": [{"verifier_id": "v", "verifier_values": {"weight": "heavy"}}]},
     "verifiers[0].verifier_values.weight"),
    ("grader/configs/{task}_grading_config.json", {"verifiers": [
        {"verifier_id": "v"}, {"verifier_id": "v"}]}, "verifiers[1].verifier_id"),
])
def test_a_task_package_file_of_the_wrong_shape_is_refused_by_its_field(
        tmp_path: Path, file: str, change: dict, field: str) -> None:
    root = make_task_package(tmp_path / "p")
    write_json(root / file.format(task=PACKAGE_TASK), change)
    error = _refused(root)
    assert error.field == field and error.file.endswith(file.format(task=PACKAGE_TASK))


def test_two_package_tasks_with_one_id_are_refused(tmp_path: Path) -> None:
    root = make_task_package(tmp_path / "p")
    write_json(root / "tasks" / f"{PACKAGE_TASK_WITHOUT_CONFIG}.json",
               {"prompt": "x", "extra": {"task_id": "task_1"}})
    error = _refused(root)
    assert error.field == "extra.task_id" and "duplicate task id 'task_1'" in error.problem


def test_a_linked_package_file_is_refused_and_an_odd_file_name_is_a_safe_id(
        tmp_path: Path) -> None:
    root = make_task_package(tmp_path / "p")
    task_file = root / "tasks" / f"{PACKAGE_TASK_WITHOUT_CONFIG}.json"
    odd = root / "tasks" / "weird\tname.json"
    task_file.rename(odd)
    assert load_benchmark(root).task("weird%09name") is not None
    secret = tmp_path / "secret.json"
    secret.write_text('{"prompt": "private"}')
    odd.unlink()
    odd.symlink_to(secret)
    error = _refused(root)
    assert error.file == str(odd) and "symbolic link" in error.problem


def test_a_benchmarks_version_is_its_tasks_files_sha256_and_its_lineage(tmp_path: Path) -> None:
    import hashlib

    root = make_benchmark(tmp_path / "b")
    version = load_benchmark(root).version
    data = (root / "tasks_and_rubrics.json").read_bytes()
    assert version.sha256 == hashlib.sha256(data).hexdigest() and version.lineage == []
    change = {"proposal": "p", "kind": "regold", "task": "task_1", "field": "gold",
              "before": "a", "after": "b", "decision": "accept", "accepted_by": "ana",
              "written_by": "rubric-audit"}
    write_json(root / "patch.json", {
        "format": "rubric-audit patch 1", "version": version.sha256,
        "parent": {"name": "a", "version": "0" * 64, "lineage": ["f" * 64],
                   "changed_tasks": ["task_0"]},
        "changes": [change, {**change, "task": "task_2", "field": "criterion"}]})
    patched = load_benchmark(root).version
    assert patched.lineage == ["f" * 64, "0" * 64]
    assert patched.changed_tasks == ["task_0", "task_2"], "a gold no grader reads is no change"
    write_json(root / "patch.json", {"format": "rubric-audit patch 1", "version": "v"})
    with pytest.raises(InputError, match=r"patch\.json: parent"):
        load_benchmark(root)
    package = load_benchmark(make_task_package(tmp_path / "p")).version
    assert package.of == "its tasks as read" and len(package.sha256) == 64
