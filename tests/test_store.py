"""audit.db: schema versioning, idempotent imports, append-only reviews."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from rubric_audit.audit import import_runs
from rubric_audit.errors import InputError
from rubric_audit.model import FindingReview, Review
from rubric_audit.store import SCHEMA_VERSION, AuditStore
from tests.conftest import SHARED_RUNS, make_task, make_variant


def test_new_store_is_at_current_schema(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        assert store.schema_version == SCHEMA_VERSION


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "audit.db")
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(InputError, match="newer than this rubric-audit"):
        AuditStore(tmp_path / "audit.db")


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    (tmp_path / "audit.db").write_text("hello, not a database " * 100)
    with pytest.raises(InputError, match=r"not a usable audit\.db"):
        AuditStore(tmp_path / "audit.db")


def test_import_twice_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    first = import_runs([SHARED_RUNS], db, None)
    assert (first.added_graded, first.added_unavailable) == (24, 4)
    with AuditStore(db) as store:
        before = (store.attempts(), store.grades(), store.findings(), store.tasks())
    second = import_runs([SHARED_RUNS / "grok43high-baseline"], db, None)
    assert (second.added, second.unchanged) == (0, 14)
    with AuditStore(db) as store:
        assert (store.attempts(), store.grades(), store.findings(), store.tasks()) == before
        assert len(store.grades()) == 50 and len(store.tasks()) == 14


def test_new_runs_add_only_themselves(tmp_path: Path) -> None:
    task = make_task()
    ok = {"task_1_c1": "pass", "task_1_c2": "pass"}
    make_variant(tmp_path / "runs", "v1", "m/one", [(task, 1, ok)])
    db = tmp_path / "audit.db"
    assert import_runs([tmp_path / "runs"], db, None).added == 1
    make_variant(tmp_path / "more", "v1", "m/one", [(task, 2, ok)])
    summary = import_runs([tmp_path / "more"], db, None)
    assert (summary.added, summary.conflicts) == (1, 0)
    with AuditStore(db) as store:
        assert [a.index for a in store.attempts()] == [1, 2]


def test_conflicting_attempt_is_kept_not_overwritten(tmp_path: Path) -> None:
    task = make_task()
    make_variant(tmp_path / "a", "v1", "m/one", [(task, 1, {"task_1_c1": "pass"})])
    make_variant(tmp_path / "b", "v1", "m/one", [(task, 1, {"task_1_c1": "fail"})])
    db = tmp_path / "audit.db"
    import_runs([tmp_path / "a"], db, None)
    assert import_runs([tmp_path / "b"], db, None).conflicts == 1
    with AuditStore(db) as store:
        assert [g.verdict for g in store.grades()] == ["pass"]
        assert [f.check for f in store.findings()] == ["input_attempt_conflict"]


def test_reviews_are_append_only(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        review = Review(reviewer="ana", created_at="2026-01-01T00:00:00Z", task_id="t",
                        label="model_error")
        first = store.append_review(review)
        store.append_review(review.model_copy(update={"label": None, "retracts": first}))
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("UPDATE reviews SET label = 'sound'")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            store.db.execute("DELETE FROM reviews")
        assert [r.retracts for _, r in store.reviews()] == [None, first]
        judged = FindingReview(reviewer="ana", created_at="t", finding_key="k", task_id="t",
                               check="c", verdict="false_alarm")
        store.append_finding_review(judged)
        for statement in ("UPDATE finding_reviews SET verdict = 'confirmed'",
                          "DELETE FROM finding_reviews"):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                store.db.execute(statement)
        assert [r.verdict for _, r in store.finding_reviews()] == ["false_alarm"]


@pytest.mark.parametrize("statement", [
    "REPLACE INTO reviews (id, reviewer, created_at, task_id, label, note, evidence_hash)"
    " VALUES (1, 'eve', 't', 't', 'sound', '', '')",
    "INSERT OR REPLACE INTO reviews (id, reviewer, created_at, task_id, label, note,"
    " evidence_hash) VALUES (1, 'eve', 't', 't', 'sound', '', '')",
    "INSERT INTO reviews (id, reviewer, created_at, task_id, label, note, evidence_hash)"
    " VALUES (1, 'eve', 't', 't', 'sound', '', '') ON CONFLICT (id) DO UPDATE SET label = 'sound'",
])
def test_a_review_cannot_be_replaced(tmp_path: Path, statement: str) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        store.append_review(Review(reviewer="ana", created_at="2026-01-01T00:00:00Z",
                                   task_id="t", label="model_error"))
    db = sqlite3.connect(tmp_path / "audit.db")  # a separate connection, as any tool would open
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute(statement)
    db.execute("INSERT INTO reviews (reviewer, created_at, task_id, label, note, evidence_hash)"
               " VALUES ('bo', 't', 't', 'sound', '', '')")
    db.commit()
    assert list(db.execute("SELECT id, reviewer, label FROM reviews ORDER BY id")) == [
        (1, "ana", "model_error"), (2, "bo", "sound")]
    db.close()


def test_failed_transaction_writes_nothing(tmp_path: Path) -> None:
    with AuditStore(tmp_path / "audit.db") as store:
        with pytest.raises(RuntimeError), store.transaction():
            store.db.execute("INSERT INTO worlds VALUES ('w', '{}')")
            raise RuntimeError("boom")
        assert store.worlds() == []
