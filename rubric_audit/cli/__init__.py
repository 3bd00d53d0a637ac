"""The `rubric-audit` command line: parses arguments, calls the library, prints with rich.

One module per command group (benchmark, audit, models, review, patch), each registering its
commands on the one app (`common.app`); this package's import registers them all. progress.py
draws a long command's progress.

May import: every stage (core to the jobs, audit and patch), and the review app (`review.py`
starts it: the one door).
"""

from rubric_audit.cli import audit, benchmark, models, patch, review
from rubric_audit.cli.common import app

__all__ = ["app", "audit", "benchmark", "models", "patch", "review"]
