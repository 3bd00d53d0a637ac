"""The code base type-checks: mypy, strict, with the pydantic plugin, as pyproject.toml configures
it (part of the test line, so CI enforces it).

mypy runs as a user runs it, from the project's root on the packages the configuration names. Its
cache is the default .mypy_cache there: about a minute on a cold cache, seconds after.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_mypy_is_clean() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed (pip install -e '.[dev]' brings it)")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues found" in done.stdout, done.stdout
