"""From finding to fix: confirmed defects (defects), a proposal of a known kind for each (kinds),
the file the benchmark's author decides them in (proposals), rewordings a model writes when one
is given (rewording), the accepted changes made to the tasks (edit) and written as a new
benchmark folder with patch.json and CHANGELOG.md (write), verified by the controls and by
re-grading every recorded attempt (verify); one packet per defect for the benchmark's tracker
(packets); the commands end to end (job).

May import: every stage up to report (core to report); never audit, the command line or the app.
"""
