"""Benchmarks and runs of every format read into the core's models, and nothing else: no checks,
no printing, no writing. A module per format (apex, task_package, runs, harbor, tb, inspect_log),
with world.py for a world's files, mail, calendar and chat and trajectory.py for every format's
trajectory in one shape. Unusable input raises core.errors.InputError naming the file and field.

May import: core.
"""
