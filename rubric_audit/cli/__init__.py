"""The `rubric-audit` command line: parses arguments, calls the library, prints with rich.

One module per command group (benchmark, audit, models, review), each registering its commands
on the one app (`common.app`); this package's import registers them all.
"""

from rubric_audit.cli import audit, benchmark, models, review
from rubric_audit.cli.common import app

__all__ = ["app", "audit", "benchmark", "models", "review"]
