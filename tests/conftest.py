"""Shared test helpers: benchmarks and run folders built in tmp_path, and the recorded fixtures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_RUNS = FIXTURES / "apex-agents-runs"
SAMPLE = ROOT / "rubrics" / "sample"

MBOX = b"""From alice@firm.test Mon Mar 03 09:00:00 2025
Message-ID: <m1@firm.test>
Date: Mon, 03 Mar 2025 09:00:00 +0000
From: Alice <alice@firm.test>
To: bob@firm.test
Subject: Budget numbers

Please use the revised budget of 1.2m.

From bob@firm.test Mon Mar 03 10:00:00 2025
Message-ID: <m2@firm.test>
In-Reply-To: <m1@firm.test>
Date: Mon, 03 Mar 2025 10:00:00 +0000
From: Bob <bob@firm.test>
To: alice@firm.test
Subject: Re: Budget numbers

Noted.
"""

ICS = b"""BEGIN:VCALENDAR\r
VERSION:2.0\r
PRODID:-//test//EN\r
BEGIN:VEVENT\r
UID:ev1@firm.test\r
DTSTAMP:20250301T000000Z\r
DTSTART:20250305T140000Z\r
DTEND:20250305T150000Z\r
SUMMARY:Budget review\r
ATTENDEE:mailto:alice@firm.test\r
END:VEVENT\r
END:VCALENDAR\r
"""


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def make_task(task_id: str = "task_1", world_id: str = "world_a", **changes: Any) -> dict:
    task = {
        "task_id": task_id, "task_name": f"name_{task_id}", "domain": "Law",
        "world_id": world_id, "prompt": "What is the revised budget?",
        "rubric": [
            {"verifier_id": f"{task_id}_c1", "criteria": "States the budget is 1.2m",
             "criteria_explanation": "From Alice's mail.", "is_primary_objective": True},
            {"verifier_id": f"{task_id}_c2", "criteria": "Mentions the budget review meeting",
             "criteria_explanation": "Calendar event on 5 March."},
        ],
        "gold_response": "The revised budget is 1.2m; it is reviewed on 5 March.",
        "gold_response_type": "text", "expected_output": "message_in_console",
    }
    task.update(changes)
    return task


def write_world(folder: Path) -> None:
    (folder / "filesystem" / "docs").mkdir(parents=True)
    (folder / "filesystem" / "docs" / "notes.md").write_text("Budget notes: draft 1.0m.\n")
    (folder / ".apps_data" / "mail").mkdir(parents=True)
    (folder / ".apps_data" / "mail" / "inbox.mbox").write_bytes(MBOX)
    (folder / ".apps_data" / "calendar").mkdir(parents=True)
    (folder / ".apps_data" / "calendar" / "work.ics").write_bytes(ICS)
    space = folder / ".apps_data" / "chat" / "Groups" / "Space AAA"
    write_json(space / "group_info.json", {"name": "Budget team", "members": [
        {"name": "Alice", "email": "alice@firm.test", "user_type": "Human"}]})
    write_json(space / "messages.json", {"messages": [
        {"creator": {"name": "Alice", "email": "alice@firm.test", "user_type": "Human"},
         "created_date": "2025-03-03T11:00:00Z", "text": "Budget is final.",
         "topic_id": "t1", "message_id": "c1"}]})


def make_benchmark(root: Path, tasks: list[dict] | None = None, zipped: bool = False) -> Path:
    """A small valid APEX benchmark with one world, unzipped or zipped."""
    root.mkdir(parents=True, exist_ok=True)
    write_json(root / "tasks_and_rubrics.json", tasks if tasks is not None else [make_task()])
    write_json(root / "world_descriptions.json", [{
        "world_id": "world_a", "world_name": "Firm A", "world_description": "A test firm.",
        "domain": "Law", "apps": [{"service_id": "mail", "service_name": "Mail"}]}])
    folder = root / "worlds" / "world_a"
    write_world(folder)
    if zipped:
        (root / "world_files_zipped").mkdir()
        shutil.make_archive(str(root / "world_files_zipped" / "world_a"), "zip", folder)
        shutil.rmtree(root / "worlds")
    return root


def make_attempt(folder: Path, task: dict, verdicts: dict[str, str] | None,
                 answer: str = "The budget is 1.2m.") -> Path:
    """An Archipelago attempt folder; verdicts None means it never reached grading."""
    write_json(folder / "initial_messages.json", [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": task["prompt"]}])
    write_json(folder / "verifiers.json", [
        {"verifier_id": c["verifier_id"], "task_id": task["task_id"], "world_id": task["world_id"],
         "verifier_values": {"criteria": c["criteria"],
                             "is_primary_objective": c.get("is_primary_objective", False)},
         "verifier_index": i} for i, c in enumerate(task["rubric"])])
    write_json(folder / "trajectory.json", {
        "messages": [{"role": "user", "content": task["prompt"]},
                     {"role": "tool", "name": "final_answer", "content": answer}],
        "output": None, "status": "completed", "time_elapsed": 12.5,
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
    write_json(folder / "grading_settings.json", {"llm_judge_model": "openai/judge-1"})
    if verdicts is not None:
        write_json(folder / "grades.json", {
            "grading_run_id": "gr_1", "grading_run_status": "completed",
            "verifier_results": [
                {"verifier_id": vid, "score": 1.0 if v == "pass" else 0.0, "status": "ok",
                 "verifier_result_values": {"judge_grade": v, "grade_rationale": f"{v} because"}}
                for vid, v in verdicts.items()],
            "scoring_results": {"final_score": 0.0}})
    return folder


def make_variant(root: Path, name: str, model: str, attempts: list[tuple[dict, int, Any]],
                 failures: list[str] = ()) -> Path:
    """A variant folder: attempts are (task, k, verdicts); k > 1 uses attempt_<k>/ folders."""
    variant = root / name
    rows = []
    for task, k, verdicts in attempts:
        task_dir = variant / task["task_id"]
        make_attempt(task_dir if k == 1 else task_dir / f"attempt_{k}", task, verdicts)
        if verdicts is not None:
            rows.append(f"{task['task_id']},{task['domain']},{task['world_id']},completed,"
                        f"completed,{model},openai/judge-1,/elsewhere/{task['task_id']}/x.json")
    variant.mkdir(parents=True, exist_ok=True)
    (variant / "results.csv").write_text(
        "task_id,domain,world_id,status,agent_status,agent_model,judge_model,trajectory_path\n"
        + "".join(r + "\n" for r in rows))
    (variant / "results.failures.jsonl").write_text("".join(
        json.dumps({"task_id": t, "agent_model": model, "error": "agent_status='failed'"}) + "\n"
        for t in failures))
    return variant


def bench_of_shared_runs(root: Path) -> Path:
    """A benchmark holding the recorded fixtures' tasks as their runs recorded them (no worlds)."""
    from rubric_audit.load.runs import load_runs

    root.mkdir(parents=True, exist_ok=True)
    write_json(root / "tasks_and_rubrics.json", [
        {"task_id": t.id, "world_id": t.world_id, "prompt": t.prompt,
         "rubric": [{"verifier_id": c.id, "criteria": c.text} for c in t.criteria]}
        for t in load_runs([SHARED_RUNS]).tasks.values()])
    return root


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return make_benchmark(tmp_path / "bench")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def imported_runs(tmp_path_factory) -> Path:
    """An audit folder holding the recorded fixture runs, imported, with answer provenance
    checked; tests that change it work on a copy."""
    from rubric_audit.audit import check_provenance, import_runs
    from rubric_audit.store import AuditStore

    out = tmp_path_factory.mktemp("runs") / "out"
    out.mkdir()
    import_runs([SHARED_RUNS], out / "audit.db", None)
    with AuditStore(out / "audit.db") as store:
        check_provenance(store)
    return out
