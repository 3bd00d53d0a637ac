"""The LLM judge through litellm and instructor against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.load.benchmark import load_benchmark
from rubric_audit.load.runs import load_runs
from tests.conftest import SAMPLE, sample_runs_of
from tests.fakes.openai_server import FakeOpenAI, Reply, error, is_preflight, scripted, text

JUDGE = "openai/fake-judge"
TASKS = ("kestrel_05", "meridian_04")


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A copy of two tasks of atlas-1's recorded runs (grading writes beside them)."""
    return sample_runs_of(tmp_path, TASKS)


def grade(runs: Path, server: FakeOpenAI, tmp_path: Path, *extra: str):
    args = ["grade", str(runs), "--judge", JUDGE, "--bench", str(SAMPLE), "--api-base",
            server.url, "--cache", str(tmp_path / "cache.db"), *extra]
    return CliRunner().invoke(app, args, env={"OPENAI_API_KEY": "sk-test"})


def verdict_json(verdict: str) -> Reply:
    return text(json.dumps({"rationale": f"judged {verdict}", "verdict": verdict}))


def tolerant_judge(body: dict[str, Any]) -> Reply:
    """Passes everything except an answer stating 30 days."""
    prompt = body["messages"][-1]["content"]
    return verdict_json("fail" if "30 days" in prompt else "pass")


def test_judge_writes_a_grading_run_beside_the_recorded_one(runs: Path, tmp_path: Path) -> None:
    with FakeOpenAI(tolerant_judge) as server:
        result = grade(runs, server, tmp_path)
        assert result.exit_code == 0, result.output
        requests = server.work_requests
        assert is_preflight(server.requests[0]), "the judge is checked before any work"
    assert "Graded 4 attempts" in result.stdout and "Verdicts: 2 fail, 2 pass" in result.stdout
    assert len(requests) == 4
    bench = load_benchmark(SAMPLE)
    golds = [bench.task(n).gold.text for n in TASKS]
    for body in requests:
        prompt = body["messages"][-1]["content"]
        assert not any(gold in prompt for gold in golds), "the judge never sees the gold"
        assert "Stated tolerances" in prompt
    recorded = list(runs.rglob("grades.json"))
    assert len(recorded) == 4, "recorded grades are kept"
    loaded = load_runs([runs])
    graders = {g.grader for g in loaded.grades}
    assert graders == {"recorded", f"judge:{JUDGE}"}
    mine = {g.attempt_id.split("/")[1]: g.verdict for g in loaded.grades
            if g.grader == f"judge:{JUDGE}"}
    assert mine[bench.task("meridian_04").id] == "fail"
    assert mine[bench.task("kestrel_05").id] == "pass"


def test_unparseable_reply_is_unscored(runs: Path, tmp_path: Path) -> None:
    with FakeOpenAI(scripted([text("I think it passes, probably.")])) as server:
        result = grade(runs, server, tmp_path)
        assert result.exit_code == 0, result.output
        assert len(server.work_requests) == 4 * 3, "one call and two re-asks per criterion"
    assert "Verdicts: 4 unscored" in result.stdout
    [run] = [json.loads(p.read_text()) for p in runs.rglob("grades/*.json")][:1]
    assert run["grading_run_status"] == "completed"
    assert run["verifier_results"][0]["status"] == "unscored"
    judged = [g for g in load_runs([runs]).grades if g.grader.startswith("judge:")]
    assert {g.verdict for g in judged} == {"unscored"}


def test_second_grade_is_served_from_the_cache(runs: Path, tmp_path: Path) -> None:
    with FakeOpenAI(tolerant_judge) as server:
        grade(runs, server, tmp_path)
        first, work = len(server.requests), len(server.work_requests)
        again = grade(runs, server, tmp_path)
        assert len(server.requests) > first and len(server.work_requests) == work, \
            "no new grading call: only the check of the judge"
    assert "(4 from cache), 0 tokens" in again.stdout


def test_another_server_of_the_same_model_name_is_not_served_from_the_cache(
        runs: Path, tmp_path: Path) -> None:
    """Two servers may serve different models under one name, and another output cap may cut
    a reply: neither is answered from replies cached for the first."""
    with FakeOpenAI(tolerant_judge) as first:
        grade(runs, first, tmp_path)
    with FakeOpenAI(tolerant_judge) as second:
        grade(runs, second, tmp_path)
        assert len(second.work_requests) == 4
        again = grade(runs, second, tmp_path, "--max-output-tokens", "300")
        assert len(second.work_requests) == 8
    assert "(0 from cache)" in again.stdout


def test_provider_down_after_the_check_leaves_the_attempts_ungraded_and_writes_nothing(
        runs: Path, tmp_path: Path) -> None:
    before = sorted(p for p in runs.rglob("*"))
    with FakeOpenAI(scripted([text("ok"), error(503)])) as server:
        result = grade(runs, server, tmp_path)
        assert result.exit_code == 0, result.output
        assert len(server.work_requests) == 4 * 4, "each call: one try and three retries"
    assert "Graded 0 attempts" in result.stdout and "4 could not be graded" in result.stdout
    assert sorted(p for p in runs.rglob("*")) == before, "no grading run written"
    assert not [g for g in load_runs([runs]).grades if g.grader.startswith("judge:")]


def test_a_benchmark_template_is_used_and_checked(runs: Path, tmp_path: Path) -> None:
    template = tmp_path / "ours.md"
    template.write_text("TASK $prompt\nANSWER $answer\nCRITERION $criterion\n")
    with FakeOpenAI(tolerant_judge) as server:
        assert grade(runs, server, tmp_path, "--judge-template", str(template)).exit_code == 0
        assert server.work_requests[0]["messages"][-1]["content"].startswith("TASK ")
    template.write_text("no placeholders here")
    with FakeOpenAI(tolerant_judge) as server:
        bad = grade(runs, server, tmp_path, "--judge-template", str(template))
    assert bad.exit_code == 2 and "template lacks $" in bad.stderr


def test_grade_grades_the_ungraded_attempts_and_skips_runs_that_did_not_finish(
        runs: Path, tmp_path: Path) -> None:
    ungraded, unfinished, *_ = sorted(runs.rglob("attempt_*"))
    (ungraded / "grades.json").unlink()
    (unfinished / "grades.json").unlink()
    trajectory = json.loads((unfinished / "trajectory.json").read_text())
    (unfinished / "trajectory.json").write_text(json.dumps({**trajectory, "status": "error"}))
    assert [a.state for a in load_runs([runs]).attempts][:2] == ["ungraded", "unavailable"]
    with FakeOpenAI(tolerant_judge) as server:
        result = grade(runs, server, tmp_path)
        assert result.exit_code == 0, result.output
    text_out = " ".join(result.stdout.split())
    assert f"Graded 3 attempts with {JUDGE}, 1 of them ungraded until now" in text_out
    assert "1 skipped: the agent run did not finish" in text_out
    assert not (unfinished / "grades").exists()
    states = {a.source: a.state for a in load_runs([runs]).attempts}
    assert (states[str(ungraded)], states[str(unfinished)]) == ("graded", "unavailable")


def test_a_llama_cpp_like_server_gets_schema_constrained_json_and_the_parse_rate_is_said(
        runs: Path, tmp_path: Path) -> None:
    with FakeOpenAI(tolerant_judge, applies=frozenset({"json-object-schema"}),
                    refuses=frozenset({"json-schema"})) as server:
        result = grade(runs, server, tmp_path)
        assert result.exit_code == 0, result.output
        formats = [r["response_format"] for r in server.work_requests]
    assert formats and all(f["type"] == "json_object" and f["schema"]["required"] ==
                           ["rationale", "verdict"] for f in formats)
    said = " ".join(result.stdout.split())
    assert "Parsed 100.0% of the judge's replies (0 unscored) in json-object-schema mode" in said
    assert "longest request" in said and "wall time" in said
    [written, *_] = [json.loads(p.read_text()) for p in runs.rglob("grades/*.json")]
    assert written["structured_mode"] == "json-object-schema"


def test_a_runaway_reply_is_cut_unscored_with_its_reason(runs: Path, tmp_path: Path) -> None:
    runaway = Reply({"role": "assistant", "content": '{"rationale": "and so on and so on'},
                    finish_reason="length")
    with FakeOpenAI(lambda body: text("ok") if is_preflight(body) else runaway) as server:
        result = grade(runs, server, tmp_path, "--max-output-tokens", "64")
        assert result.exit_code == 0, result.output
        assert len(server.work_requests) == 4, "one call per criterion, never re-asked"
        assert {r["max_tokens"] for r in server.work_requests} == {64}
    said = " ".join(result.stdout.split())
    assert "Verdicts: 4 unscored" in said and "4 of them cut at the output cap" in said
    [run, *_] = [json.loads(p.read_text()) for p in runs.rglob("grades/*.json")]
    [criterion] = run["verifier_results"][:1]
    assert criterion["status"] == "unscored"
    assert criterion["verifier_result_values"]["grade_rationale"].startswith(
        "judge reply cut: the reply ran into the output cap of 64 tokens")


def test_grading_without_a_terminal_prints_progress_lines(runs: Path, tmp_path: Path,
                                                          monkeypatch) -> None:
    import rubric_audit.cli.progress

    monkeypatch.setattr(rubric_audit.cli.progress, "INTERVAL", 0.3)
    with FakeOpenAI(tolerant_judge, latency=0.4) as server:
        result = grade(runs, server, tmp_path, "--concurrency", "1")
        assert result.exit_code == 0, result.output
    lines = [line for line in result.stderr.splitlines()
             if line.startswith("grading with openai/fake-judge: ")]
    assert len(lines) >= 4, result.stderr
    assert lines[-1].startswith("grading with openai/fake-judge: 4/4 calls (4 parsed, 0 unscored")
    assert any(" 0/4 calls" in line or " 1/4 calls" in line for line in lines), \
        "a line comes each interval, also while no call has ended"


def test_the_report_gives_each_judges_parse_rate(runs: Path, tmp_path: Path) -> None:
    def judge(body: dict[str, Any]) -> Reply:
        asked = " ".join(str(m["content"]) for m in body["messages"])  # re-asks included
        return text("no verdict here") if "30 days" in asked else verdict_json("pass")

    with FakeOpenAI(judge) as server:
        assert grade(runs, server, tmp_path).exit_code == 0
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["audit", str(SAMPLE), "--runs", str(runs), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    [replies] = json.loads((out / "audit.json").read_text())["judge_replies"]
    assert replies == {"grader": f"judge:{JUDGE}", "replies": 4, "unscored": 2,
                       "parse_rate": 0.5}
    report = (out / "report.md").read_text()
    assert "LLM judges' replies" in report and "50.0%" in report.split("LLM judges' replies")[1]
