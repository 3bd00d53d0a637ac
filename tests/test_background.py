"""Work started in a forked process (rubric_audit/audit/background.py): the result comes from the child,
and a child that fails leaves the work to this process, failing as it would have."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rubric_audit.audit.background import in_background, in_order

ROOT = Path(__file__).resolve().parents[1]


CHILD_CHECKS = """
import os
from rubric_audit.audit.background import in_background, in_order

def pid_and(value):
    return os.getpid(), value * 2

def fails_in_child(parent):
    if os.getpid() != parent:
        raise RuntimeError("child only")
    return 7

def always_fails():
    raise ValueError("bad recipe")

with in_background(pid_and, 21) as pending:
    pid, value = pending.result()
assert value == 42 and pid != os.getpid(), (pid, value)
with in_background(fails_in_child, os.getpid()) as pending:
    assert pending.result() == 7
try:
    with in_background(always_fails) as pending:
        pending.result()
except ValueError as exc:
    assert "bad recipe" in str(exc)
else:
    raise AssertionError("the failure did not surface")
print("checked")
"""


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def test_a_forked_child_computes_and_a_failed_one_leaves_the_work_here() -> None:
    """In a fresh interpreter (one thread, as the CLI runs; pytest's own process may hold
    others): the result comes from another process, a child that fails leaves the work to this
    process, and a failure surfaces as it would have without the child."""
    done = subprocess.run([sys.executable, "-c", CHILD_CHECKS], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "checked", done.stderr


IN_ORDER_CHECKS = """
import os
from rubric_audit.audit.background import in_order, workers_available

here = os.getpid()

def pid_and(value):
    return os.getpid(), value * 2

def dies_in_a_worker(value):
    if value == 3 and os.getpid() != here:
        os._exit(1)
    return value

def fails(value):
    if value == 5:
        raise ValueError(f"bad item {value}")
    return value

assert workers_available() == min(os.cpu_count(), 2) >= 2, workers_available()
results = list(in_order(pid_and, range(40), workers=2))
assert [v for _, v in results] == [2 * n for n in range(40)]
assert here not in {pid for pid, _ in results} and len({pid for pid, _ in results}) == 2
assert list(in_order(dies_in_a_worker, range(10), workers=2)) == list(range(10))
try:
    list(in_order(fails, range(10), workers=2))
except ValueError as exc:
    assert "bad item 5" in str(exc)
else:
    raise AssertionError("the failure did not surface")
os.environ["RUBRIC_AUDIT_WORKERS"] = "1"
assert {pid for pid, _ in in_order(pid_and, range(4))} == {here}
print("checked")
"""


def test_work_spread_over_workers_comes_back_in_order_and_fails_as_here() -> None:
    """In a fresh interpreter on two cores or more: items done by two forked workers come back
    in order; the items of a worker that died are done here; an item that fails raises here as
    it would without workers; RUBRIC_AUDIT_WORKERS=1 keeps the work here."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("one core: in_order works in the process itself")
    done = subprocess.run([sys.executable, "-c", IN_ORDER_CHECKS], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT),
                                          "RUBRIC_AUDIT_WORKERS": "2"})
    assert done.returncode == 0 and done.stdout.strip() == "checked", done.stderr


def test_with_other_threads_the_work_runs_here() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with in_background(_pid_and, 1) as pending:
            assert pending.result() == (os.getpid(), 2)
        assert {pid for pid, _ in in_order(_pid_and, range(3))} == {os.getpid()}
    finally:
        stop.set()
        thread.join()


def test_the_main_job_in_its_own_process_writes_the_committed_report(tmp_path: Path) -> None:
    """The CLI runs single-threaded, so gold recomputation runs in the child there."""
    out = tmp_path / "sample"
    subprocess.run([sys.executable, "-m", "rubric_audit", "audit", str(ROOT / "rubrics/sample"),
                    "--out", str(out)], check=True, capture_output=True, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    for name in ("audit.json", "findings.jsonl", "report.md"):
        assert (out / name).read_text() == (ROOT / "reports/sample" / name).read_text(), name
