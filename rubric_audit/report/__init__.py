"""The audit's outputs: audit.json (summary), findings.jsonl and report.md."""
