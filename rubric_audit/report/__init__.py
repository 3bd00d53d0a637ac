"""Reporting: scores under each rescoring option with intervals (statistics, stats), audit.json
(summary), the report as one document (document) rendered to markdown and HTML, findings and
criteria as sentences (describe), ablations (ablation, apps) and the tables as DataFrames (frames).

May import: every stage before it (core to review); never audit or the command line.
"""
