"""The core every stage shares: the data model, input errors, safe text, the pass rule and the one
door to models.

core.model (benchmarks, tasks, attempts, grades, findings, reviews), core.errors (an input error
names its file and field), core.limits (zips from strangers checked before reading), core.text (one
function per sink for stranger text), core.words (a count with its noun), core.atomic (files and
folders written whole), core.workbook (xlsx cells and formulas), core.scores (the APEX pass rule),
core.llm (litellm, imported lazily: preflight, bounded calls, retries, cache, structured replies),
core.batch (structured replies through a provider's batch API, resumable).

May import: nothing of rubric-audit's outside core.
"""
