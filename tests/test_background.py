"""Work started in a forked process (rubric_audit/background.py): the result comes from the child,
and a child that fails leaves the work to this process, failing as it would have."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rubric_audit.background import in_background

ROOT = Path(__file__).resolve().parents[1]


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def _fails_in_child(parent: int) -> int:
    if os.getpid() != parent:
        raise RuntimeError("child only")
    return 7


def _always_fails() -> None:
    raise ValueError("bad recipe")


def _alone(fn, *args):
    """Run `fn(*args)` in a thread-free interpreter state: pytest may hold threads."""
    if threading.active_count() != 1:
        pytest.skip("another thread runs in this test process; covered by the subprocess test")
    return fn(*args)


def test_the_result_comes_from_a_forked_child() -> None:
    def check() -> None:
        with in_background(_pid_and, 21) as pending:
            pid, value = pending.result()
        assert value == 42 and pid != os.getpid()

    _alone(check)


def test_a_failed_child_leaves_the_work_to_this_process() -> None:
    def check() -> None:
        with in_background(_fails_in_child, os.getpid()) as pending:
            assert pending.result() == 7
        with in_background(_always_fails) as pending, pytest.raises(ValueError, match="bad"):
            pending.result()

    _alone(check)


def test_with_other_threads_the_work_runs_here() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        with in_background(_pid_and, 1) as pending:
            assert pending.result() == (os.getpid(), 2)
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
