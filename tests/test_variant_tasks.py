"""Tasks rebuilt from the variants that ran them: the shared prompt, differences, disagreements."""

from __future__ import annotations

import json

import pytest

from rubric_audit.checks.input import input_variants_disagree
from rubric_audit.core.model import Criterion, Task
from rubric_audit.load import runs as runs_module
from rubric_audit.load.runs import load_runs
from rubric_audit.load.sources import load_sources
from rubric_audit.load.variant_tasks import mask_environment_text, sentences, shared_task
from tests.conftest import SHARED_RUNS

BASE = "Compute the DCF value per share. Use the midyear convention.\n\nRound to the cent."


def _task(prompt: str, criteria: tuple[str, ...] = ("States 12.34",), world: str = "w") -> Task:
    return Task(id="t", name="t", world_id=world, prompt=prompt, source="runs",
                criteria=[Criterion(id=f"c{i}", text=text) for i, text in enumerate(criteria)])


def test_the_recorded_fixtures_keep_the_prompt_without_the_cheatsheet() -> None:
    runs = load_runs([SHARED_RUNS])
    for task in runs.tasks.values():
        messages = json.loads((SHARED_RUNS / "grok43high-baseline" / task.id /
                               "initial_messages.json").read_text())
        assert task.prompt == messages[1]["content"]
    added = [d for d in runs.differences if d.added]
    assert {d.variant for d in added} == {"grok43high-dc-rs"} and len(added) == len(runs.tasks)
    for d in added:
        assert not any(sentence in runs.tasks[d.task_id].prompt for sentence in d.added
                       if len(sentence) > 20)
        assert "Reference cheatsheet" in " ".join(d.added)


def test_a_variant_folder_read_first_does_not_give_the_task_its_prompt() -> None:
    runs = load_runs([SHARED_RUNS / "grok43high-dc-rs", SHARED_RUNS / "grok43high-baseline"])
    assert not any("cheatsheet" in t.prompt for t in runs.tasks.values())


def test_each_task_is_shared_once_over_every_source(monkeypatch) -> None:
    """The loaders record each source's tasks; they are shared once, over all of them."""
    shared: list[str] = []

    def counted(task_id: str, recorded: dict[str, Task]):
        shared.append(task_id)
        return shared_task(task_id, recorded)

    monkeypatch.setattr(runs_module, "shared_task", counted)
    runs = load_sources([SHARED_RUNS / "grok43high-dc-rs", SHARED_RUNS / "grok43high-baseline"])
    assert sorted(shared) == sorted(runs.tasks) and len(runs.tasks) == 14
    assert [(s.tasks, s.criteria) for s in runs.sources] == [(14, 36), (14, 36)]


def test_added_and_dropped_sentences_are_each_variants_difference() -> None:
    task, differences = shared_task("t", {
        "base": _task(BASE),
        "hint": _task("Check the mail first. " + BASE),
        "terse": _task(BASE.replace(" Use the midyear convention.", ""))})
    assert task.prompt == BASE
    by_variant = {d.variant: (d.added, d.dropped) for d in differences}
    assert by_variant == {"base": ([], []), "hint": (["Check the mail first."], []),
                          "terse": ([], ["Use the midyear convention."])}


def test_two_additions_without_a_plain_run_leave_the_shared_sentences() -> None:
    task, differences = shared_task("t", {"a": _task("Hint A. " + BASE),
                                          "b": _task(BASE + "\nHint B.")})
    assert sentences(task.prompt) == sentences(BASE)
    assert "Hint" not in task.prompt
    assert {d.variant: d.added for d in differences} == {"a": ["Hint A."], "b": ["Hint B."]}


def test_rubric_and_world_disagreements_are_findings() -> None:
    recorded = {"a": _task(BASE), "b": _task(BASE), "c": _task(BASE, ("States 99",), "w2")}
    task, differences = shared_task("t", recorded)
    assert task.criteria[0].text == "States 12.34" and task.world_id == "w"
    findings = list(input_variants_disagree(task, recorded, differences))
    assert [f.severity for f in findings] == ["error", "error"]
    assert findings[0].evidence["kept"]["variants"] == ["a", "b"]
    assert list(findings[0].evidence["other"]) == ["c"]
    assert findings[1].evidence["other"] == {"c": "w2"}


def test_variants_that_agree_give_no_finding() -> None:
    recorded = {"a": _task(BASE), "b": _task(BASE)}
    task, differences = shared_task("t", recorded)
    assert task.prompt == BASE
    assert list(input_variants_disagree(task, recorded, differences)) == []


def test_a_dropped_sentence_is_a_warning_and_an_addition_info() -> None:
    recorded = {"base": _task(BASE), "hint": _task(BASE + " Hint."),
                "terse": _task(BASE.replace("Round to the cent.", ""))}
    task, differences = shared_task("t", recorded)
    severity = {f.evidence["variant"]: f.severity
                for f in input_variants_disagree(task, recorded, differences)}
    assert severity == {"hint": "info", "terse": "warning"}


def test_a_variant_that_recorded_no_rubric_does_not_disagree() -> None:
    recorded = {"a-unscored": _task(BASE, ()), "b": _task(BASE)}
    task, differences = shared_task("t", recorded)
    assert [c.text for c in task.criteria] == ["States 12.34"]
    assert list(input_variants_disagree(task, recorded, differences)) == []


@pytest.mark.parametrize(("one", "other"), [
    ("root@3f2a1b9c8d7e:/app# ", "root@a1b2c3d4e5f6:/app# "),                    # shell prompt
    ("agent@ip-10-0-1-23:~/work$ ls", "agent@ip-10-0-7-99:~/work$ ls"),
    ("Host 3f2a1b9c8d7e is up.", "Host a1b2c3d4e5f6 is up."),                     # container host
    ("Run 0b7e4a52-9c1d-4f3e-8a6b-2d5c7e9f1a30 started.",                           # uuid
     "Run 5f6e7d8c-1a2b-4c3d-9e8f-0a1b2c3d4e5f started."),
    ("Started at 2026-05-01T10:00:00.123456Z.", "Started at 2026-05-02T09:13:07+02:00."),
    ("Now: 2026-05-01 10:00:00", "Now: 2026-06-11 23:59:59"),                     # timestamps
    ("Thu May  1 10:00:00 UTC 2026", "Fri Jun 12 08:30:05 UTC 2026"),
    ("Files are in /tmp/tmpa1b2c3d4/out.", "Files are in /tmp/tmpz9y8x7w6/out."),  # temp paths
    ("Use /tmp/tmp.Xy12AbCd9Q now.", "Use /tmp/tmp.Qq00ZZzz11 now."),
    ("Cache: /var/folders/x1/ab_cd/T/cache", "Cache: /var/folders/zz/q9_8r/T/cache"),
])
def test_per_run_environment_text_is_masked(one: str, other: str) -> None:
    assert mask_environment_text(one) == mask_environment_text(other)
    assert mask_environment_text(one) != one


@pytest.mark.parametrize(("one", "other"), [
    ("Use the midyear convention.", "Use the year-end convention."),
    ("Write the result to /tmp/out.txt.", "Write the result to /tmp/result.txt."),
    ("Report by 2026-05-01.", "Report by 2026-06-01."),                         # a date, no time
    ("Meet at 10:00.", "Meet at 11:00."),
    ("root@box:/app# make", "root@box:/app# make test"),
    ("Check out deadbeefcafe.", "Check out cafebabedead."),                    # hex, no digit
    ("The answer is 123456789012.", "The answer is 123456789013."),            # digits only
])
def test_a_real_difference_is_never_masked(one: str, other: str) -> None:
    assert mask_environment_text(one) != mask_environment_text(other)


def test_variants_differing_by_environment_text_alone_agree_and_a_sentence_still_counts() -> None:
    def prompt(host: str, stamp: str, extra: str = "") -> str:
        return f"{BASE}{extra}\nStarted {stamp}.\nroot@{host}:/app# "

    recorded = {"a": _task(prompt("3f2a1b9c8d7e", "2026-05-01T10:00:00Z")),
                "b": _task(prompt("a1b2c3d4e5f6", "2026-05-01T10:07:31Z")),
                "c": _task(prompt("0c0c0c0c0c0c", "2026-05-01T11:00:00Z", " Show your work."))}
    task, differences = shared_task("t", recorded)
    assert task.prompt == recorded["a"].prompt, "a recorded prompt, as recorded"
    findings = list(input_variants_disagree(task, recorded, differences))
    assert [(f.evidence["variant"], f.evidence["added"], f.evidence["dropped"])
            for f in findings] == [("c", ["Show your work."], [])]


def test_masking_is_linear_in_the_text() -> None:
    import time

    hostile = ("a" * 50_000 + "@" + "b." * 50_000 + ":" + "/x" * 50_000 + " 2026-05-01T" * 5_000
               + "0123456789ab" * 10_000 + "-" * 10_000)
    def seconds(text: str) -> float:
        start = time.perf_counter()
        mask_environment_text(text)
        return time.perf_counter() - start

    small = min(seconds(hostile) for _ in range(2))
    large = min(seconds(hostile * 4) for _ in range(2))
    assert large < 8 * small + 0.05, (small, large)  # 4x the text: linear ~4x, quadratic 16x
