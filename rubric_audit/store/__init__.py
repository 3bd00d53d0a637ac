"""audit.db, the SQLite store through which the stages exchange data (store.audit_store): its
schema and migrations, and every query that reads or writes it.

May import: core, load (the models a row holds).
"""
