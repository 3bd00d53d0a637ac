"""The `rubric-audit` command line: parses arguments, calls the library, prints with rich.

One module per command group (benchmark, audit, models, review), each registering its commands
on the one app (`common.app`); this package's import registers them all. progress.py draws a
long command's progress.

May import: every stage (core to audit), and the review app (`review.py` starts it: the one door).
"""

from rubric_audit.cli import audit, benchmark, models, review
from rubric_audit.cli.common import app

__all__ = ["app", "audit", "benchmark", "models", "review"]
