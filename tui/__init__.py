"""The review app (Textual); built in issue 8."""
