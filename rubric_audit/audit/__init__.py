"""The main job, end to end (job): load and validate, store, check, grade where a model is given,
and write the reports; the fingerprint that lets an unchanged audit reuse its work (inputs) and
gold recomputation started beside the reading of runs (background).

May import: every stage (core to report); never the command line or the app.
"""
