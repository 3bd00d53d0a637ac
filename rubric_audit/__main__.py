"""`python -m rubric_audit` is the `rubric-audit` command."""

from rubric_audit.cli import app

app()
