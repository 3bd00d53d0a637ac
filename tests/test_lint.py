"""The code base stays ruff-clean (part of the test line, so CI enforces it)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_ruff_check_is_clean() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", str(ROOT)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
