"""Shared test helpers: benchmarks and run folders built in tmp_path, and the recorded fixtures."""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAI, Reply, text

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


@pytest.fixture(autouse=True, scope="session")
def _library_log(tmp_path_factory: pytest.TempPathFactory) -> None:
    """litellm's log lines go to a file of the test session's, not the user's log folder."""
    import os

    os.environ.setdefault("RUBRIC_AUDIT_LOG", str(tmp_path_factory.mktemp("log") / "rubric-audit.log"))


def folder_contents(folder: Path, *leave_out: str) -> dict[str, bytes]:
    """Every file under `folder` (its path inside it -> its bytes) but those named in
    `leave_out`: an output folder, the site's pages included, to compare before and after."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name not in leave_out}


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


PACKAGE_TASK = "firm-a-01-1234abcd"
PACKAGE_TASK_WITHOUT_CONFIG = "firm-a-02-5678ef90"


def make_task_package(root: Path, with_world_files: bool = True) -> Path:
    """A small Archipelago task package of the published shape: two tasks of world_a, one with
    its grader config and its own files and app data, one with neither; the world's shared files
    (files/, tools/.apps_data/<app>/) only `with_world_files`."""
    extra = {"world_id": "world_a", "world_name": "Firm A"}
    write_json(root / "tasks" / f"{PACKAGE_TASK}.json", {
        "prompt": [{"type": "text", "content": "What is the revised budget?"},
                   {"type": "text", "content": "Use the memo."}],
        "rubrics": [{"name": f"States the budget... ({PACKAGE_TASK}_c{i})", "weight": 1.0,
                     "messages": [{"type": "text", "content": "From the task file."}]}
                    for i in (1, 2)],
        "extra": {**extra, "task_id": "task_1", "task_name": "Firm_A_01", "golden_responses": [
            {"golden_text_response": "The revised budget is 1.2m.", "golden_file_responses": None}]},
    })
    write_json(root / "grader" / "configs" / f"{PACKAGE_TASK}_grading_config.json", {
        "grading_settings": {"llm_judge_model": "openai/judge-1"},
        "verifiers": [
            {"verifier_id": f"{PACKAGE_TASK}_c1", "verifier_values": {
                "criteria": "States the budget is 1.2m", "weight": 2,
                "criteria_explanation": "From Alice's mail.", "is_primary_objective": "true"}},
            {"verifier_id": f"{PACKAGE_TASK}_c2", "verifier_values": {
                "criteria": "Mentions the budget review meeting", "weight": None,
                "criteria_explanation": None, "is_primary_objective": "false"}}]})
    write_json(root / "tasks" / f"{PACKAGE_TASK_WITHOUT_CONFIG}.json", {
        "prompt": [{"type": "text", "content": "Draft the reply."}],
        "rubrics": [{"name": "Replies to Alice (ver_abc)", "weight": 3,
                     "messages": [{"type": "text", "content": "Replies to Alice."}]}],
        "extra": {**extra, "golden_responses": [
            {"golden_text_response": "", "golden_file_responses": "snap_1"}]},
    })
    own = root / "tools" / "files" / PACKAGE_TASK
    own.mkdir(parents=True)
    (own / "memo.md").write_text("Memo: the budget is 1.2m.\n")
    (root / "tools" / ".apps_data" / PACKAGE_TASK / "calendar").mkdir(parents=True)
    (root / "tools" / ".apps_data" / PACKAGE_TASK / "calendar" / "work.ics").write_bytes(ICS)
    (root / "grader" / "configs").mkdir(parents=True, exist_ok=True)
    if with_world_files:
        (root / "files" / "docs").mkdir(parents=True)
        (root / "files" / "docs" / "notes.md").write_text("Budget notes: draft 1.0m.\n")
        (root / "tools" / ".apps_data" / "mail").mkdir(parents=True)
        (root / "tools" / ".apps_data" / "mail" / "inbox.mbox").write_bytes(MBOX)
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


def sample_runs_of(root: Path, task_names: tuple[str, ...]) -> Path:
    """A copy under `root` of atlas-1's recorded runs of the sample's tasks named (grading
    writes beside them); the runs folder."""
    from rubric_audit.load.benchmark import load_benchmark

    bench = load_benchmark(SAMPLE)
    out = root / "runs" / "atlas-1"
    out.mkdir(parents=True)
    for name in task_names:
        task_id = bench.task(name).id
        shutil.copytree(SAMPLE / "runs" / "atlas-1" / task_id, out / task_id)
    return root / "runs"


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
    from rubric_audit.audit.job import import_runs
    from rubric_audit.audit.stages import check_provenance
    from rubric_audit.store.audit_store import AuditStore

    out = tmp_path_factory.mktemp("runs") / "out"
    out.mkdir()
    import_runs([SHARED_RUNS], out / "audit.db", None)
    with AuditStore(out / "audit.db") as store:
        check_provenance(store)
    return out


CRITERIA = {"c1": "States the revised budget is $1.2m",
            "c2": "Mentions the budget review meeting on 5 March"}


def _grader(request: dict) -> Reply:
    """The agent answers; the grader passes what the answer holds and fails the meeting."""
    prompt = json.dumps(request["messages"])
    if "GRADE" in prompt or "Criterion:" in prompt:
        return text("The meeting is not mentioned.\nGRADE: I" if "meeting" in prompt
                    else "The answer states $1.2m.\nGRADE: C")
    return text("The revised budget is $1.2m.")


@pytest.fixture(scope="session")
def written_logs(tmp_path_factory) -> list[Path]:
    """A rubric-graded task run by inspect_ai itself against the local fake model (through
    inspect's OpenAI-compatible provider on 127.0.0.1), written as .eval and as .json: one
    sample graded by three scorers (model_graded_fact, a dict of verdicts, rubric items in the
    score's metadata), one whose solver raised."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Score, mean, model_graded_fact, scorer
    from inspect_ai.solver import solver

    async def verdicts(model: str, answer: str) -> dict[str, tuple[str, str]]:
        grader = get_model(model)
        out = {}
        for cid, criterion in CRITERIA.items():
            reply = await grader.generate(f"Criterion: {criterion}\nAnswer: {answer}\n"
                                          f"End with GRADE: C or GRADE: I")
            out[cid] = ("C" if "GRADE: C" in reply.completion else "I", reply.completion)
        return out

    @scorer(metrics={"*": [mean()]})
    def rubric_dict(model: str):
        async def score(state, target):
            graded = await verdicts(model, state.output.completion)
            return Score(value={cid: v for cid, (v, _) in graded.items()},
                         explanation="; ".join(why for _, why in graded.values()))
        return score

    @scorer(metrics=[mean()])
    def rubric_items(model: str):
        async def score(state, target):
            graded = await verdicts(model, state.output.completion)
            items = [{"id": f"item-{cid}", "criterion": CRITERIA[cid], "value": v,
                      "explanation": why} for cid, (v, why) in graded.items()]
            return Score(value=sum(v == "C" for v, _ in graded.values()) / len(graded),
                         metadata={"rubric": items})
        return score

    @solver
    def agent():
        async def solve(state, generate):
            if state.sample_id == "broken":
                raise RuntimeError("sandbox went away")
            return await generate(state)
        return solve

    root = tmp_path_factory.mktemp("inspect")
    with FakeOpenAI(_grader) as server, pytest.MonkeyPatch.context() as env:
        # A service name of its own: inspect keeps model clients per process, by name.
        env.setenv("INSPECTLOG_BASE_URL", server.url)
        env.setenv("INSPECTLOG_API_KEY", "local")
        judge = "openai-api/inspectlog/judge-1"
        task = Task(dataset=[Sample(id="budget", input="What is the revised budget?",
                                    target="$1.2m"),
                             Sample(id="broken", input="Anything?", target="x")],
                    solver=agent(), name="budget_task",
                    scorer=[model_graded_fact(model=judge), rubric_dict(judge),
                            rubric_items(judge)])
        written = []
        for fmt in ("eval", "json"):
            [log] = inspect_eval(task, model="openai-api/inspectlog/agent-1", log_format=fmt,
                                 log_dir=str(root / fmt), display="none", fail_on_error=False,
                                 max_retries=1, timeout=120)
            written.append(Path(log.location))
    return written


def eval_entries(path: Path) -> list[tuple[zipfile.ZipInfo, bytes]]:
    """A .eval log's entries as inspect_ai wrote them (zstd-compressed: importing inspect_ai's
    log reader teaches zipfile zstd)."""
    import inspect_ai.log  # noqa: F401

    with zipfile.ZipFile(path) as zf:
        return [(info, zf.read(info)) for info in zf.infolist()]


def write_eval(path: Path, entries: list[tuple[zipfile.ZipInfo, bytes]]) -> None:
    """The entries written back, each compressed as it was."""
    with zipfile.ZipFile(path, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)


def add_lying_entry(archive: Path, name: str, method: int, megabytes: int,
                    declared: int = 1000) -> None:
    """Add to a zip an entry of `megabytes` MB of spaces compressed by `method`, then make its
    local header and its central directory record declare `declared` bytes (a zip bomb that
    passes every check of declared sizes)."""
    with zipfile.ZipFile(archive, "a", method) as zf, zf.open(name, "w") as entry:
        for _ in range(megabytes):
            entry.write(b" " * 2**20)
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as zf:
        struct.pack_into("<I", data, zf.getinfo(name).header_offset + 22, declared)
        record = zf.start_dir
    # the central directory: records of 46 bytes then a name, extra field and comment
    while data[record + 46:record + 46 + struct.unpack_from("<H", data, record + 28)[0]] \
            != name.encode():
        record += 46 + sum(struct.unpack_from("<3H", data, record + 28))
    struct.pack_into("<I", data, record + 24, declared)
    archive.write_bytes(data)


WIN_RATES = {"s1": (0.05, 0.01, 0.12), "s2": (0.25, 0.15, 0.35), "s3": (0.6, 0.5, 0.7),
             "soft": (0.0, 0.0, 0.05)}
"""The grader's win rate with its bounds, per sample of `measured_logs` that gets scored."""
CORRECT_STEPS = {"s1": 3, "s2": 1, "s3": 2, "soft": 0}
"""Steps of 3 solved per sample in epoch 1; s3 solves one more in epoch 2."""
RATINGS = {"s1": "SCORE: 10", "s2": "SCORE: 7", "s3": "a fine answer", "soft": "SCORE: 0"}
"""The grader's 0-10 rating (s3's reply has no score: inspect records it as I)."""
REFUSAL = "I can't help with that."
HUGE_PROMPT = "Summarise this: " + "lorem ipsum " * 3000


def _measuring_grader(request: dict) -> Reply:
    """The agent answers (and refuses the REFUSE samples, as a content filter would); the grader
    rates each sample as the tables above say."""
    prompt = json.dumps(request["messages"])
    sample = next((s for s in WIN_RATES if f"[{s}]" in prompt), "")
    if "WIN RATE" in prompt:
        return text("WIN RATE: {} LOW: {} HIGH: {}".format(*WIN_RATES[sample]))
    if "SCORE:" in prompt:
        return text(RATINGS[sample])
    if "REFUSE" in prompt:
        return Reply({"role": "assistant", "content": REFUSAL}, finish_reason="content_filter")
    return text(f"My answer to {sample or 'this'}.")


@pytest.fixture(scope="session")
def measured_logs(tmp_path_factory) -> list[Path]:
    """A task run by inspect_ai itself, two epochs, written as .eval and as .json, with the
    scores real logs publish that are no verdicts: an LLM-graded win rate with its bounds (a
    dict of continuous values), a dict of step counts beside a 0/1 problem correctness (as
    SciCode's scorer), and model_graded_fact's 0-10 rating. Samples s1-s3 answer; `soft` is
    stopped by the provider's content filter (an answer, scored); `hard` fails on the model's
    refusal (ModelRefusalError); `big` fails in the harness with the whole prompt in its error."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import get_model
    from inspect_ai.scorer import Score, mean, model_graded_fact, scorer, stderr
    from inspect_ai.solver import solver

    @scorer(metrics={"*": [mean()]})
    def win_rate(model: str):
        async def score(state, target):
            reply = await get_model(model).generate(
                f"[{state.sample_id}] WIN RATE of this answer against the reference: "
                f"{state.output.completion}")
            rate, low, high = (float(x) for x in reply.completion.split()[2::2])
            return Score(value={"win_rate": rate, "win_rate_low": low, "win_rate_high": high},
                         explanation=reply.completion)
        return score

    @scorer(metrics={"Problem Correctness": [mean(), stderr()], "Total Correct": [mean()]})
    def steps():
        async def score(state, target):
            solved = min(3, CORRECT_STEPS[state.sample_id] + (state.epoch - 1) * (
                state.sample_id == "s3"))
            return Score(value={"Problem Correctness": int(solved == 3), "Total Correct": solved,
                                "Total Steps": 3})
        return score

    @solver
    def agent():
        async def solve(state, generate):
            if state.sample_id == "big":
                raise RuntimeError(f"Error code: 400 - prompt too long: {state.input_text}")
            return await generate(state, fail_on_refusal=state.sample_id == "hard")
        return solve

    root = tmp_path_factory.mktemp("measured")
    with FakeOpenAI(_measuring_grader) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("MEASURED_BASE_URL", server.url)
        env.setenv("MEASURED_API_KEY", "local")
        judge = "openai-api/measured/judge-1"
        task = Task(dataset=[Sample(id=s, input=f"[{s}] What is the answer?", target="42")
                             for s in ("s1", "s2", "s3")]
                    + [Sample(id="soft", input="[soft] REFUSE this one.", target="42"),
                       Sample(id="hard", input="REFUSE this one too.", target="42"),
                       Sample(id="big", input=HUGE_PROMPT, target="42")],
                    solver=agent(), name="measured_task", epochs=2,
                    scorer=[win_rate(judge), steps(),
                            model_graded_fact(model=judge, grade_pattern=r"SCORE:\s*(\d+)",
                                              instructions="Rate it from 0 to 10, then "
                                                           "SCORE: n")])
        written = []
        for fmt in ("eval", "json"):
            [log] = inspect_eval(task, model="openai-api/measured/agent-1", log_format=fmt,
                                 log_dir=str(root / fmt), display="none", fail_on_error=False,
                                 max_retries=1, timeout=120)
            written.append(Path(log.location))
    return written



def _tb_uuid(*parts: str) -> str:
    """A stable UUID-shaped id for tb's id fields (uuid4 in tb itself)."""
    digest = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-8{digest[17:20]}-{digest[20:32]}"


def tb_trial(task: str, run_id: str, k: int = 1, n: int = 1, resolved: bool | None = True,
             failure_mode: str = "unset", tests: dict[str, str] | None = None,
             tokens: tuple[int | None, int | None] = (1200, 300), ran: bool = True) -> dict:
    """A TrialResults as terminal-bench's harness writes it (terminal_bench/harness/models.py).
    `tests` defaults to two pytest results, one failing where unresolved (none where no verdict);
    `ran=False` is a trial the harness failed around (no times, tokens or recording)."""
    if tests is None and resolved is not None:
        tests = {"test_output_exists": "passed",
                 "test_output_content": "passed" if resolved else "failed"}
    name = f"{task}.{k}-of-{n}.{run_id}"

    def at(minute: int) -> str | None:
        return f"2025-08-10T05:{minute:02d}:00.000000+00:00" if ran else None

    return {"id": _tb_uuid(run_id, name), "trial_name": name, "task_id": task,
            "instruction": f"Do the {task} task in /app and leave the result in /app/out.txt.",
            "is_resolved": resolved, "failure_mode": failure_mode, "parser_results": tests,
            "recording_path": f"{run_id}/{task}/{name}/sessions/agent.cast" if ran else None,
            "total_input_tokens": tokens[0] if ran else None,
            "total_output_tokens": tokens[1] if ran else None,
            "trial_started_at": at(0), "trial_ended_at": at(12), "agent_started_at": at(1),
            "agent_ended_at": at(9), "test_started_at": at(10), "test_ended_at": at(11)}


def make_tb_run(root: Path, run_id: str, trials: list[dict], agent: str | None = "terminus",
                model: str | None = "openai/gpt-5", summary: bool = True,
                trial_files: bool = True, metadata: bool = True, uuid: str | None = None) -> Path:
    """A run folder as `tb run` writes it: run_metadata.json (RunMetadata), tb.lock (RunLock),
    run.log, results.json (BenchmarkResults with its computed fields) and, for each trial that
    ran, `<task>/<trial>/results.json` (TrialResults) with commands.txt and sessions/."""
    folder = root / run_id
    folder.mkdir(parents=True, exist_ok=True)
    tasks = sorted({t["task_id"] for t in trials})
    n_attempts = max((int(t["trial_name"].rsplit("-of-", 1)[1].split(".")[0]) for t in trials),
                     default=1)
    resolved = [t for t in trials if t["is_resolved"]]
    accuracy = len(resolved) / len(trials) if trials else 0.0
    if metadata:
        write_json(folder / "run_metadata.json", {
            "run_id": run_id, "uuid": uuid or _tb_uuid(run_id), "dataset_path": None,
            "dataset_name": "terminal-bench-core", "dataset_version": "0.1.1",
            "output_path": str(root), "agent_name": agent, "no_rebuild": False,
            "cleanup": False, "log_level": 20, "task_ids": tasks, "exclude_task_ids": None,
            "n_tasks": None, "n_concurrent_trials": 4, "n_attempts": n_attempts,
            "dataset_size": len(tasks), "accuracy": accuracy, "model_name": model,
            "start_time": "2025-08-10T05:00:00+00:00", "end_time": "2025-08-10T06:00:00+00:00",
            "commit_hash": "unknown", "username": "tester", "s3_bucket": None,
            "agent_kwargs": None, "pass_at_k": {}, "resumed_at": None})
        write_json(folder / "tb.lock", {
            "lockfile_version": "1.0", "created_at": "2025-08-10T05:00:00+00:00",
            "invocation": {"command": "tb", "args": ["run", "--agent", str(agent)]},
            "harness": {"package": "terminal-bench", "version": "0.2.17"},
            "agent": {"name": agent, "import_path": None, "model_name": model,
                      "extra_kwargs": {}},
            "run_config": {"log_level": "info", "n_attempts": n_attempts}})
        (folder / "run.log").write_text("INFO run started\n")
    if summary:
        write_json(folder / "results.json", {
            "id": _tb_uuid(run_id, "results"), "results": trials, "pass_at_k": {},
            "n_resolved": len(resolved), "n_unresolved": len(trials) - len(resolved),
            "resolved_ids": [t["task_id"] for t in resolved],
            "unresolved_ids": [t["task_id"] for t in trials if not t["is_resolved"]],
            "accuracy": accuracy})
    for t in trials if trial_files else []:
        if t["recording_path"] is None:  # the harness failed around it: no trial folder
            continue
        trial_folder = folder / t["task_id"] / t["trial_name"]
        write_json(trial_folder / "results.json", t)
        (trial_folder / "commands.txt").write_text("['clear', 'Enter']\n"
                                                   "['bash /tests/run-tests.sh', 'Enter']\n")
        (trial_folder / "sessions").mkdir()
        (trial_folder / "sessions" / "agent.log").write_text("$ ls\n")
    return folder
