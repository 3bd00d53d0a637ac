"""The code base stays ruff-clean (part of the test line, so CI enforces it).

Only the project's own folders are checked: a clone may hold a virtual environment of any name
beside them, whose installed scripts are not ours.
"""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SOURCES = ("rubric_audit", "mock_workspace", "tui", "tests", "bench", "rubrics")


def test_ruff_check_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", *(str(ROOT / s) for s in SOURCES)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
