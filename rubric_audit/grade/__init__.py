"""Grading with a model: the LLM judge (one structured call per criterion, from a template in
judge_templates/) and the controls graded by the judge or written by a model (control_runs).

May import: core, load, store, checks.
"""
