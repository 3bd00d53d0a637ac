"""inspect_ai eval logs: the real recorded fixtures, and logs inspect_ai writes in the test against
the local fake model (`written_logs` in conftest)."""

from __future__ import annotations

import json
import shutil
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from statistics import mean

import pytest
from typer.testing import CliRunner

from rubric_audit.audit.job import run_audit
from rubric_audit.audit.stages import import_into
from rubric_audit.cli import app
from rubric_audit.core.errors import InputError
from rubric_audit.core.limits import ZIP_ZSTANDARD
from rubric_audit.load.sources import load_sources
from rubric_audit.store.audit_store import AuditStore
from tests.conftest import (
    CORRECT_STEPS,
    CRITERIA,
    FIXTURES,
    HUGE_PROMPT,
    REFUSAL,
    WIN_RATES,
    add_lying_entry,
    eval_entries,
    write_eval,
)

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


def test_an_unscored_log_is_ungraded_and_does_not_disagree(tmp_path: Path) -> None:
    """Samples that ran and answered with no scorer are ungraded (a judge can grade them), never
    unavailable: nothing failed."""
    runs = load_sources([UNSCORED])
    assert {a.state for a in runs.attempts} == {"ungraded"} and len(runs.attempts) == 10
    assert all(a.answer for a in runs.attempts)
    [source] = runs.sources
    assert (source.ungraded, source.unavailable, source.unavailable_reasons) == (10, 0, {})
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
        # the rubric scorer's own value sums its items up: a measurement, beside the log's mean
        assert [(m.scorer, m.key, m.value) for m in runs.measurements] == [
            ("rubric_items", "", 0.5)]
        assert all(m.computed == m.value for m in runs.metrics if m.metric == "mean")
        assert {(m.scorer, m.key) for m in runs.metrics} == {
            ("model_graded_fact", ""), ("rubric_dict", "c1"), ("rubric_dict", "c2"),
            ("rubric_items", "")}


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
    ('{"version": 2, "status": "success"}', "not an inspect_ai log: no `eval` among its top-level"),
    ('{"version": 2, "status": "success", "eval": {}}', r"eval\.\w+: missing required field"),
    ('{"log.eval": {"version": 2, "eval": {}}}', "its top-level key 'log.eval' is no field"),
    ("[1, 2]", "not an inspect_ai log: not JSON: not a JSON object"),
    ("just text", "not an inspect_ai log"),
    ("version https://git-lfs.github.com/spec/v1\noid sha256:ab\n", "a Git LFS pointer"),
])
def test_bad_logs_are_refused_in_one_line(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / ("log.json" if content[0] in "{[" else "log.eval")
    path.write_text(content)
    with pytest.raises(InputError, match=expected):
        load_sources([path])
    result = runner.invoke(app, ["audit", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and str(path) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def _changed_entry(entries: list, name: str, data: bytes) -> list:
    return [(info, data if info.filename == name else raw) for info, raw in entries]


def _epoch(epoch: int) -> Callable[[list], list]:
    """The first sample's epoch changed (SQLite stores none past 2**63 - 1)."""
    def change(entries: list) -> list:
        name = next(i.filename for i, _ in entries if i.filename.startswith("samples/"))
        sample = json.loads(dict((i.filename, raw) for i, raw in entries)[name])
        return _changed_entry(entries, name, json.dumps({**sample, "epoch": epoch}).encode())
    return change


@pytest.mark.parametrize(("change", "field", "problem"), [
    (lambda entries: _changed_entry(entries, "reductions.json", b"7"), None,
     "not an inspect_ai log: 'int' object is not iterable"),
    (_epoch(0), "samples[0].epoch", "must be from 1 to 9,223,372,036,854,775,807, found 0"),
    (_epoch(10**30), "samples[1].epoch",  # read in epoch order: the changed sample is last
     f"must be from 1 to 9,223,372,036,854,775,807, found {10**30}"),
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


def _bundle(logs: list[Path], root: Path) -> Path:
    """The site `inspect view bundle` writes for a log directory holding `logs` (viewer files,
    the logs under logs/ with their listing.json), with the logs.json manifest older bundles
    carry, a link to a log outside and a linked folder (neither is followed)."""
    from inspect_ai.log import bundle_log_dir, write_log_dir_manifest

    source = root / "log-dir"
    source.mkdir()
    for log in logs:
        shutil.copy(log, source / log.name)
    bundle_log_dir(str(source), str(root / "site"))
    site_logs = root / "site" / "logs"
    write_log_dir_manifest(str(site_logs))
    outside = root / "outside"
    outside.mkdir()
    shutil.copy(logs[0], outside / "elsewhere.eval")
    (site_logs / "linked.eval").symlink_to(outside / "elsewhere.eval")
    (site_logs / "linked").symlink_to(outside, target_is_directory=True)
    return root / "site"


def test_a_bundle_site_reads_every_log_it_holds_and_skips_the_rest(written_logs,
                                                                    tmp_path: Path) -> None:
    site = _bundle(written_logs, tmp_path)
    assert {p.name for p in site.iterdir()} >= {"index.html", "assets", "logs"}
    runs = load_sources([site])
    assert sorted({a.source for a in runs.attempts}) == sorted(
        str(site / "logs" / p.name) for p in written_logs)
    assert len(runs.attempts) == 2 * len(written_logs)
    *logs, folder = runs.sources
    assert [s.format for s in logs] == ["inspect"] * len(written_logs)
    assert folder.path == str(site) and folder.attempts == 0
    assert sorted(line.split(":")[0] for line in folder.unmapped) == [
        "logs/listing.json", "logs/logs.json"]
    assert all("skipped, not an inspect_ai log" in line for line in folder.unmapped)
    result = runner.invoke(app, ["audit", str(site), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "not mapped: logs/listing.json: skipped" in " ".join(result.stdout.split())


def test_a_folder_of_json_logs_in_subfolders_is_read(written_logs, tmp_path: Path) -> None:
    [json_log] = [p for p in written_logs if p.suffix == ".json"]
    for folder in ("a", "b/c"):
        (tmp_path / "runs" / folder).mkdir(parents=True)
        shutil.copy(json_log, tmp_path / "runs" / folder / json_log.name)
    runs = load_sources([tmp_path / "runs" / "a"])
    assert len(runs.attempts) == 2 and [s.path for s in runs.sources] == [
        str(tmp_path / "runs" / "a" / json_log.name)]


def test_a_folder_without_any_known_layout_is_refused_naming_every_layout(
        tmp_path: Path) -> None:
    (tmp_path / "site" / "logs").mkdir(parents=True)
    (tmp_path / "site" / "logs" / "listing.json").write_text('{"x.eval": {"status": "success"}}')
    (tmp_path / "site" / "index.html").write_text("<html></html>")
    with pytest.raises(InputError) as caught:
        load_sources([tmp_path / "site"])
    for layout in ("Archipelago variant folder", "Harbor trial, job or folder of jobs",
                   "inspect_ai log (.eval or .json)", "Terminal-Bench 1"):
        assert layout in caught.value.problem


def test_values_that_are_no_verdicts_are_measurements_beside_the_logs_metrics(
        measured_logs) -> None:
    """Win rates with their bounds, step counts and a 0-10 rating make no criterion; the 0/1
    problem correctness beside the counts does. Every accuracy and mean the log states is what
    its samples give."""
    graded = sorted(WIN_RATES)
    for path in measured_logs:
        runs = load_sources([path])
        assert {c.text for t in runs.tasks.values() for c in t.criteria} == {
            "steps: Problem Correctness"}
        verdicts = {(g.attempt_id.split("/")[1].split(":")[1], int(g.attempt_id[-1])): g.verdict
                    for g in runs.grades}
        assert verdicts == {(s, e): "pass" if min(3, CORRECT_STEPS[s] + (e - 1) * (s == "s3"))
                            == 3 else "fail" for s in graded for e in (1, 2)}
        measured = {(m.attempt_id.split("/")[1].split(":")[1], m.scorer, m.key): m
                    for m in runs.measurements if m.attempt_id.endswith("/1")}
        assert {(scorer, key) for _, scorer, key in measured} == {
            ("win_rate", "win_rate"), ("win_rate", "win_rate_low"), ("win_rate", "win_rate_high"),
            ("steps", "Total Correct"), ("steps", "Total Steps"), ("model_graded_fact", "")}
        for s in graded:
            assert [measured[(s, "win_rate", k)].value for k in
                    ("win_rate", "win_rate_low", "win_rate_high")] == list(WIN_RATES[s])
            assert measured[(s, "steps", "Total Steps")].recorded == "3"
        assert measured[("s1", "model_graded_fact", "")].recorded == '"10"'
        assert measured[("s3", "model_graded_fact", "")].value is None  # unparsed: NaN
        metrics = {(m.scorer, m.key, m.metric): m for m in runs.metrics}
        assert metrics[("win_rate", "win_rate", "mean")].value == pytest.approx(
            mean(WIN_RATES[s][0] for s in graded))
        for m in metrics.values():
            if m.metric in ("mean", "accuracy"):
                assert m.computed == pytest.approx(m.value) and m.difference == "", m
            else:
                assert m.computed is None and m.difference.startswith("not recomputed")
        [source] = runs.sources
        assert "win_rate: win_rate: values that are no verdicts (e.g. 0.05): measurements, " \
               "not criteria" in source.unmapped
        assert not any("the log says" in line for line in source.unmapped)


def test_refusals_are_answers_and_harness_errors_one_line(measured_logs) -> None:
    """Output the content filter stopped is scored like any answer; a sample failed on the
    model's own refusal is ungraded with the refusal as its answer; a harness error carrying
    the whole prompt is unavailable with one short line."""
    for path in measured_logs:
        runs = load_sources([path])
        by = {(a.task_id.split(":")[1], a.index): a for a in runs.attempts}
        for epoch in (1, 2):
            soft, hard, big = by[("soft", epoch)], by[("hard", epoch)], by[("big", epoch)]
            assert (soft.state, soft.answer) == ("graded", REFUSAL)
            assert any(g.attempt_id == soft.id for g in runs.grades)
            assert (hard.state, hard.answer, hard.unavailable_reason) == (
                "ungraded", REFUSAL, None)
            assert big.state == "unavailable" and len(big.unavailable_reason) <= 200
            assert big.unavailable_reason.startswith(
                "sample errored: RuntimeError('Error code: 400 - prompt too long: Summarise")
            assert HUGE_PROMPT not in big.unavailable_reason
        [source] = runs.sources
        assert (source.graded, source.ungraded, source.unavailable) == (8, 2, 2)
        assert list(source.unavailable_reasons.values()) == [2]


def test_a_metric_its_samples_do_not_give_is_shown_with_its_reason(measured_logs,
                                                                   tmp_path: Path) -> None:
    """A log published with only some of its samples (a trimmed JSON log) states metrics over
    all of them: the difference is said, with why."""
    [json_log] = [p for p in measured_logs if p.suffix == ".json"]
    data = json.loads(json_log.read_text())
    data["samples"] = [s for s in data["samples"] if s["id"] != "s3"]
    path = tmp_path / json_log.name
    path.write_text(json.dumps(data))
    runs = load_sources([path])
    metric = next(m for m in runs.metrics if (m.scorer, m.key, m.metric) == (
        "win_rate", "win_rate", "mean"))
    assert metric.computed == pytest.approx(mean(WIN_RATES[s][0] for s in ("s1", "s2", "soft")))
    assert metric.difference == "the log's metric is over 4 samples, the log holds values of 3"
    assert f"win_rate: win_rate mean: the log says {metric.value:.4g}, its samples give " \
           f"{metric.computed:.4g}: {metric.difference}" in runs.sources[0].unmapped


def test_measurements_reach_the_store_the_report_and_the_export(measured_logs,
                                                                tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["audit", *map(str, measured_logs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "8 graded, 2 ungraded, 2 unavailable" in " ".join(result.stdout.split())
    summary = json.loads((out / "audit.json").read_text())
    measured = {(m["variant"], m["scorer"], m["key"]): m for m in summary["measurements"]}
    assert len(measured) == 6 * len(measured_logs)
    for path in measured_logs:
        win = measured[(path.stem, "win_rate", "win_rate")]
        assert win["mean"] == pytest.approx(win["source_metrics"]["mean"])
        assert win["attempts"] == 2 * len(WIN_RATES)
        [score] = [s for s in summary["scores"] if s["variant"] == path.stem]
        [correctness] = [m for m in summary["source_metrics"] if m["variant"] == path.stem
                         and (m["key"], m["metric"]) == ("Problem Correctness", "mean")]
        assert score["pass_at_1"] == pytest.approx(correctness["value"])  # the one verdict
    report = (out / "report.md").read_text()
    assert "## Measurements (recorded values that are no verdicts)" in report
    assert "## The sources' own metrics against what was read" in report
    with AuditStore(out / "audit.db") as store:
        assert len(store.measurements()) == sum(
            len(load_sources([p]).measurements) for p in measured_logs)
    exported = runner.invoke(app, ["export", str(out), "--format", "csv"])
    assert exported.exit_code == 0, exported.output
    rows = (out / "export" / "measurements.csv").read_text().splitlines()
    assert rows[0].startswith("attempt_id,task,scorer,key,value,recorded")
    with AuditStore(out / "audit.db") as store:
        assert len(rows) - 1 == len(store.measurements())
    assert "win_rate" in (out / "export" / "source_metrics.csv").read_text()


@pytest.mark.parametrize("value", [[], [1, 0], ["C", "I"]], ids=["empty", "numbers", "letters"])
def test_a_score_value_of_a_list_is_no_verdict_and_no_crash(measured_logs, tmp_path: Path,
                                                            value: object) -> None:
    """A list where a score value is expected (the fuzz found one crashed the verdict test):
    the log loads, and that value makes no criterion."""
    [json_log] = [p for p in measured_logs if p.suffix == ".json"]
    data = json.loads(json_log.read_text())
    data["samples"][2]["scores"]["win_rate"]["value"] = value
    path = tmp_path / json_log.name
    path.write_text(json.dumps(data))
    runs = load_sources([path])
    assert not any(":win_rate" in c.id for t in runs.tasks.values() for c in t.criteria)


def _with_samples(measured_logs, tmp_path: Path, change) -> Path:
    """The measured .json log with its samples changed by `change(samples)`."""
    [json_log] = [p for p in measured_logs if p.suffix == ".json"]
    data = json.loads(json_log.read_text())
    change(data["samples"])
    path = tmp_path / json_log.name
    path.write_text(json.dumps(data, allow_nan=True))
    return path


def test_sample_ids_differing_only_in_a_separator_are_two_tasks(measured_logs,
                                                                 tmp_path: Path) -> None:
    def rename(samples: list) -> None:
        first, second = (s for s in samples if s["epoch"] == 1 and s["id"] in ("s1", "s2"))
        first["id"], second["id"] = "a/b", "a_b"
    runs = load_sources([_with_samples(measured_logs, tmp_path, rename)])
    assert {"measured_task:a%2Fb", "measured_task:a_b"} <= set(runs.tasks)
    assert runs.tasks["measured_task:a%2Fb"].name == "measured_task:a/b", "named as written"


def test_a_sample_id_twice_at_one_epoch_is_a_finding_not_an_overwrite(measured_logs,
                                                                      tmp_path: Path) -> None:
    """The second sample replaced the first in the store, in silence."""
    def duplicate(samples: list) -> None:
        _, second = (s for s in samples if s["epoch"] == 1 and s["id"] in ("s1", "s2"))
        second["id"] = "s1"
    path = _with_samples(measured_logs, tmp_path, duplicate)
    with AuditStore(tmp_path / "audit.db") as store:
        import_into(store, load_sources([path]), None)
        findings, stored = store.findings(), {a.id for a in store.attempts()}
    [finding] = [f for f in findings if f.check == "input_id_collision"]
    assert finding.evidence["attempt"].endswith("/measured_task:s1/1")
    assert finding.evidence["sources"] == [str(path), str(path)]
    assert finding.evidence["attempt"] not in stored


@pytest.mark.parametrize(("field", "value"), [
    ("total_time", float("nan")), ("total_time", float("inf")),
    ("input_tokens", -3), ("output_tokens", -1), ("total_cost", float("inf")),
])
def test_a_non_finite_time_or_cost_or_negative_count_is_refused(measured_logs, tmp_path: Path,
                                                                field: str, value: float) -> None:
    """inspect's own models take any float and int: the loader checks them as every loader's."""
    def change(samples: list) -> None:
        if field == "total_time":
            samples[0]["total_time"] = value
        else:
            samples[0]["model_usage"] = {"mockllm/model": {
                "input_tokens": 10, "output_tokens": 2, "total_tokens": 12, field: value}}
    with pytest.raises(InputError) as caught:
        load_sources([_with_samples(measured_logs, tmp_path, change)])
    assert caught.value.field.startswith("samples[0]") and caught.value.field.endswith(field)
