"""inspect_ai eval logs: the real recorded fixtures, and logs inspect_ai writes in the test against
the local fake model (`written_logs` in conftest)."""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.audit import run_audit
from rubric_audit.cli import app
from rubric_audit.errors import InputError
from rubric_audit.limits import ZIP_ZSTANDARD
from rubric_audit.load.sources import load_sources
from rubric_audit.store import AuditStore
from tests.conftest import CRITERIA, FIXTURES, add_lying_entry, eval_entries, write_eval

LOGS = FIXTURES / "inspect-logs"
SECURITY = LOGS / "inspect_ai/tests/analysis/test_logs/2025-05-12T20-28-26-04-00_security-guide.json"
POPULARITY = LOGS / "inspect_ai/tests/scorer/logs"
SCORED = POPULARITY / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
UNSCORED = POPULARITY / "2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
HEADER_ONLY = LOGS / "every_eval_ever/tests/data/inspect/data_with_llm_scoring.json"
runner = CliRunner()


def test_a_model_graded_log_keeps_the_graders_explanations() -> None:
    runs = load_sources([SECURITY])
    assert [a.state for a in runs.attempts] == ["graded"] * 3
    assert {g.criterion_id for g in runs.grades} == {f"security_guide:{i}:model_graded_fact"
                                                      for i in (1, 2, 3)}
    assert all(len(g.rationale) > 100 for g in runs.grades)  # the grader's reasoning
    task = runs.tasks["security_guide:1"]
    assert task.prompt == "How do I prevent SQL Injection attacks?"
    assert task.gold.text == "use parameterized queries and prepared statements"
    assert runs.attempts[0].model == "openai/gpt-4o-mini" and runs.attempts[0].answer
    steps = runs.attempts[0].trajectory.steps
    assert [s.role for s in steps] == ["system", "user", "assistant"] and steps[-1].text


def test_an_unscored_log_is_unavailable_and_does_not_disagree(tmp_path: Path) -> None:
    runs = load_sources([UNSCORED])
    assert {a.state for a in runs.attempts} == {"unavailable"} and len(runs.attempts) == 10
    assert runs.sources[0].unavailable_reasons == {
        "not scored: the log holds no scores for this sample": 10}
    run_audit(None, [UNSCORED, SCORED], tmp_path / "out")
    with AuditStore(tmp_path / "out" / "audit.db") as store:
        assert not [f for f in store.findings() if f.check == "input_variants_disagree"]
        assert all(len(t.criteria) == 1 for t in store.tasks())


def test_a_header_only_log_says_it_had_nothing_to_map() -> None:
    [source] = load_sources([HEADER_ONLY]).sources
    assert source.attempts == 0
    assert source.unmapped == ["no samples in the log (header only): nothing to map"]


def test_rubric_scores_from_inspect_become_per_criterion_grades(written_logs) -> None:
    for path in written_logs:
        runs = load_sources([path])
        by_id = {a.task_id: a for a in runs.attempts}
        assert by_id["budget_task:budget"].state == "graded"
        assert by_id["budget_task:broken"].state == "unavailable"
        assert by_id["budget_task:broken"].unavailable_reason.startswith(
            "sample errored: RuntimeError")
        verdicts = {g.criterion_id: (g.verdict, g.rationale) for g in runs.grades}
        assert verdicts["budget_task:budget:rubric_dict:c1"][0] == "pass"
        assert verdicts["budget_task:budget:rubric_dict:c2"][0] == "fail"
        assert verdicts["item-c1"] == ("pass", "The answer states $1.2m.\nGRADE: C")
        assert verdicts["item-c2"] == ("fail", "The meeting is not mentioned.\nGRADE: I")
        assert verdicts["budget_task:budget:model_graded_fact"][0] == "pass"
        task = runs.tasks["budget_task:budget"]
        assert {c.text for c in task.criteria} >= set(CRITERIA.values())
        assert runs.sources[0].unavailable_reasons == {
            "sample errored: RuntimeError('sandbox went away')": 1}


def test_an_inspect_audit_round_trips_through_report(written_logs, tmp_path: Path) -> None:
    result = runner.invoke(app, ["audit", str(written_logs[0]), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "(inspect): 2 attempts, 1 graded, 1 unavailable" in " ".join(result.stdout.split())
    again = runner.invoke(app, ["report", str(tmp_path / "out")])
    assert again.exit_code == 0, again.output
    summary = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert summary["tasks"] == 2 and summary["unavailable"][0]["reason"].startswith(
        "sample errored")
    assert summary["code_checker"]["checked"] >= 1  # "$1.2m" in a criterion, checked in code


@pytest.mark.parametrize(("content", "expected"), [
    ('{"version": 2, "status": "success"', "not an inspect_ai log"),
    ('{"version": 2, "status": "success"}', "eval: missing required field"),
    ("just text", "not an inspect_ai log"),
])
def test_bad_logs_are_refused_in_one_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / ("log.json" if content.startswith("{") else "log.eval")
    path.write_text(content)
    with pytest.raises(InputError, match=expected):
        load_sources([path])
    result = runner.invoke(app, ["audit", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and str(path) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def _changed_entry(entries: list, name: str, data: bytes) -> list:
    return [(info, data if info.filename == name else raw) for info, raw in entries]


def _epoch_zero(entries: list) -> list:
    name = next(i.filename for i, _ in entries if i.filename.startswith("samples/"))
    sample = json.loads(dict((i.filename, raw) for i, raw in entries)[name])
    return _changed_entry(entries, name, json.dumps({**sample, "epoch": 0}).encode())


@pytest.mark.parametrize(("change", "field", "problem"), [
    (lambda entries: _changed_entry(entries, "reductions.json", b"7"), None,
     "not an inspect_ai log: 'int' object is not iterable"),
    (_epoch_zero, "samples[0].epoch", "must be at least 1, found 0"),
])
def test_eval_entries_of_the_wrong_kind_are_refused(written_logs, tmp_path: Path, change,
                                                    field: str | None, problem: str) -> None:
    """inspect_ai's reader iterates reductions.json before validating it; it accepts any epoch."""
    path = tmp_path / "log.eval"
    write_eval(path, change(eval_entries(written_logs[0])))
    with pytest.raises(InputError) as caught:
        load_sources([path])
    assert (caught.value.field, caught.value.problem) == (field, problem)


def test_damaged_compressed_data_in_an_eval_log_is_refused(written_logs, tmp_path: Path) -> None:
    import zipfile

    archive = bytearray(written_logs[0].read_bytes())
    with zipfile.ZipFile(written_logs[0]) as zf:
        header = zf.getinfo("header.json")
    start = header.header_offset + 30 + len(header.filename) + len(header.extra)
    archive[start:start + 4] = bytes(4)  # the zstd frame's magic number
    path = tmp_path / "log.eval"
    path.write_bytes(archive)
    with pytest.raises(InputError) as caught:
        load_sources([path])
    assert caught.value.field == "header.json"
    assert caught.value.problem.startswith("unreadable zip entry: bad zstd data: zstd decompress "
                                           "error: Unknown frame descriptor")


def test_without_the_extra_the_log_is_refused_with_the_install_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # import fails as if not installed
    with pytest.raises(InputError, match=r"pip install 'rubric-audit\[inspect\]'"):
        load_sources([SECURITY])


def test_an_eval_log_that_expands_too_far_is_refused_before_reading(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "bomb.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, \
            zf.open("samples/1_epoch_1.json", "w", force_zip64=True) as entry:
        for _ in range(200):
            entry.write(bytes(2**20))
    with pytest.raises(InputError, match="zip entry too large"):
        load_sources([path])


def test_an_eval_entry_that_expands_beyond_its_declared_size_is_refused_in_bounded_memory(
        written_logs, tmp_path: Path) -> None:
    """inspect_ai's reader decompresses a whole zstd entry before cutting it to the size it
    declares: 128 MB of reductions.json declaring 1,000 bytes, in a log of a few KB."""
    path = tmp_path / "bomb.eval"
    write_eval(path, [(info, data) for info, data in eval_entries(written_logs[0])
                      if info.filename != "reductions.json"])
    add_lying_entry(path, "reductions.json", ZIP_ZSTANDARD, 128)
    assert path.stat().st_size < 64 * 2**10
    tracemalloc.start()
    try:
        result = runner.invoke(app, ["audit", str(path), "--out", str(tmp_path / "out")])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: reductions.json: zip entry expands beyond its declared size "
        f"(1,000 bytes)"]
    assert peak < 8 * 2**20
