"""Review: the append-only review log folded into labels and queues (labels), a reviewer's session
as the app shows it (session), agreement between reviewers, full-text search and the queue's
filters (search), and model-suggested labels (suggest).

May import: core, load, store, checks, grade, run.
"""
