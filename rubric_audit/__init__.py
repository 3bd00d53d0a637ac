"""rubric-audit: find the benchmark's share of an LLM-judged benchmark's failures and successes."""

__version__ = "0.1.0"
