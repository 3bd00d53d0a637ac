"""A run in parts: `run --shard K/N` (deterministic shares, merged by import) and `run --ray`
(attempts on a Ray cluster, written by the driver), each against the local runner on the fake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rubric_audit.cli import app
from rubric_audit.load.runs import load_runs
from rubric_audit.run.shard import Shard
from tests.conftest import SAMPLE
from tests.fakes.openai_server import FakeOpenAI, Reply, error, is_preflight, scripted, tool_call
from tests.test_runner import MODEL, reads_mail_and_workbook

TASKS = "kestrel_06,kestrel_07,meridian_04,nordlys_06"
TWO = "nordlys_06,kestrel_06"


def run(out: Path, server: FakeOpenAI, *extra: str, tasks: str = TASKS):
    return CliRunner().invoke(app, ["run", str(SAMPLE), "--model", MODEL, "--out", str(out),
                                    "--tasks", tasks, "--attempts", "3", "--variant", "v",
                                    "--api-base", server.url, *extra],
                              env={"OPENAI_API_KEY": "sk-test"})


def pairs(runs: Path) -> set[tuple[str, int]]:
    return {(a.task_id, a.index) for a in load_runs([runs]).attempts}


def test_shards_split_the_attempts_by_a_stable_hash_and_import_merges_them(
        tmp_path: Path) -> None:
    with FakeOpenAI(scripted([tool_call("final_answer", {"answer": "ok"})])) as server:
        whole = run(tmp_path / "whole", server)
        parts = [run(tmp_path / "parts", server, "--shard", f"{k}/3") for k in (1, 2, 3)]
        again = run(tmp_path / "parts", server, "--shard", "2/3")
    assert whole.exit_code == 0 and all(p.exit_code == 0 for p in parts), parts[0].output
    everything = pairs(tmp_path / "whole" / "v")
    shares = [pairs(tmp_path / "parts" / f"shard-{k}-of-3" / "v") for k in (1, 2, 3)]
    assert len(everything) == 12 and set().union(*shares) == everything
    assert sum(map(len, shares)) == 12, "no attempt is in two shards"
    assert all(shares), "each of three shards holds some of twelve attempts"
    assert shares[1] == {p for p in everything if Shard(index=2, count=3).holds(*p)}
    assert "0 attempts to run" in again.stdout, "a shard run again finds its attempts done"
    folders = [str(tmp_path / "parts" / f"shard-{k}-of-3") for k in (1, 2, 3)]
    imported = CliRunner().invoke(app, ["import", *folders, "--db", str(tmp_path / "a.db"),
                                        "--bench", str(SAMPLE)])
    assert imported.exit_code == 0, imported.output
    from rubric_audit.store.audit_store import open_audit

    with open_audit(tmp_path / "a.db") as store:
        assert {(a.task_id, a.index) for a in store.attempts()} == everything


@pytest.mark.parametrize("text", ["0/3", "4/3", "3", "a/b", "1/0"])
def test_a_shard_that_is_not_k_of_n_is_one_line(tmp_path: Path, text: str) -> None:
    result = CliRunner().invoke(app, ["run", str(SAMPLE), "--model", MODEL, "--out",
                                      str(tmp_path), "--shard", text])
    assert result.exit_code == 2 and "--shard" in result.stderr, result.output
    assert not any(tmp_path.iterdir()), "nothing written"


@pytest.fixture(scope="module")
def ray_cluster():
    """A local Ray cluster of 2 CPUs, started by the test (no network beyond this machine)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install "
                                            "'rubric-audit[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


UNSTABLE = {"trajectory.json": ("time_elapsed",), "run_result.json": ("wall_time",)}


def stable(folder: Path) -> dict[str, object]:
    """An attempt folder's files, less what differs between two runs of one attempt: times."""
    files: dict[str, object] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name == "telemetry.jsonl":
            files[name] = [{k: v for k, v in json.loads(line).items()
                            if k not in ("time", "seconds")}
                           for line in path.read_text().splitlines()]
        elif name in UNSTABLE:
            files[name] = {k: v for k, v in json.loads(path.read_text()).items()
                           if k not in UNSTABLE[name]}
        else:
            files[name] = path.read_bytes()
    return files


def attempt_folders(runs: Path) -> dict[str, Path]:
    return {p.relative_to(runs).as_posix(): p for p in runs.glob("v/*/attempt_*")}


def test_a_ray_run_writes_the_same_attempts_as_a_local_run_and_resumes(
        ray_cluster, tmp_path: Path) -> None:
    """Every third call of the Ray run is refused with a 429 and a Retry-After: the workers
    wait their turn from the governor and retry, and the attempts come out as the local run's."""
    calls, limiting = [0], [False]

    def limited(body: dict) -> Reply:
        calls[0] += 1
        if limiting[0] and not is_preflight(body) and calls[0] % 3 == 0:
            return error(429, retry_after=0.2)
        return reads_mail_and_workbook(body)

    with FakeOpenAI(limited) as server:
        local = run(tmp_path / "local", server, "--attempts", "1", tasks=TWO)
        made = len(server.work_requests)
        limiting[0] = True
        first = run(tmp_path / "ray", server, "--ray", "--attempts", "1", tasks=TWO)
        assert local.exit_code == 0 and first.exit_code == 0, first.output
        assert "Done: 2 completed" in first.stdout, first.stdout
        assert len(server.work_requests) - made > made, "the 429s were retried"
        resumed = run(tmp_path / "ray", server, "--ray", "--attempts", "2", tasks=TWO)
        assert resumed.exit_code == 0, resumed.output
    assert "2 attempts to run, 2 already finished" in resumed.stdout
    ours, theirs = attempt_folders(tmp_path / "local"), attempt_folders(tmp_path / "ray")
    assert len(ours) == 2 and len(theirs) == 4 and set(ours) < set(theirs)
    for name, folder in ours.items():
        assert stable(theirs[name]) == stable(folder), name
    assert "completed" in (theirs[name] / "run_result.json").read_text()
    assert (tmp_path / "ray" / "v" / "results.csv").read_text().count("\n") == 5
    assert not list((tmp_path / "ray").rglob(".attempt_*")), "no half-written attempt"


def test_limits_halve_on_a_rate_limit_and_grow_back_as_calls_are_answered() -> None:
    from rubric_audit.core.cluster import Limits

    limits = Limits(ceiling=8)
    for _ in range(8):
        assert limits.may_start("k", now=0.0)
        limits.started("k")
    assert not limits.may_start("k", now=0.0), "eight in flight: the ninth waits"
    limits.ended("k", 429, 2.0, now=10.0)
    assert limits.key("k").window == 4 and not limits.may_start("k", now=11.0), \
        "halved, and nothing starts before the Retry-After"
    for _ in range(7):
        limits.ended("k", None, None, now=12.0)
    assert limits.key("k").window == 5, "one more after a window's worth of answers"
    assert limits.may_start("k", now=12.0) and limits.may_start("other", now=0.0)


def test_grade_on_ray_gives_the_local_verdicts(ray_cluster, tmp_path: Path) -> None:
    from tests.conftest import sample_runs_of
    from tests.test_judge import TASKS as GRADED
    from tests.test_judge import grade, tolerant_judge
    from tests.test_judge_batch import judge_grades

    alone, spread = sample_runs_of(tmp_path / "a", GRADED), sample_runs_of(tmp_path / "b", GRADED)
    with FakeOpenAI(tolerant_judge) as server:
        assert grade(alone, server, tmp_path / "a").exit_code == 0
        result = grade(spread, server, tmp_path / "b", "--ray")
    assert result.exit_code == 0, result.output
    assert judge_grades(spread) == judge_grades(alone) != {}
