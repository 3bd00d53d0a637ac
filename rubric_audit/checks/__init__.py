"""Checks: pure functions from stored tasks, worlds, attempts and grades to findings (no I/O, no
model), and gold recomputation from a task's workbook (checks.regold). The code checker reads a
criterion (criterion.py), an answer (answer.py, its markup read by markup.py, its final figures
by restatements.py, the figures it gives as not its own by asides.py, whose each value is by
owners.py), binds a target to the answer's values (binding.py, polarity.py, numbers.py,
units.py) and decides (code_grade.py);
judge_vs_code.py, lints.py, controls.py, screen.py, provenance.py and input.py are the families
of findings; precision.py carries each check's measured precision onto its findings.
model_lints.py is the one family that asks a model, through core.llm.

May import: core, load, store.
"""
